import { describe, expect, it } from 'vitest';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { NodeLoadStore } from './store.js';
import { FakeSources } from './testing.js';
import { bookmark, defaultWatchTimeoutMs, filterEvent, watchStart } from './watch.js';

const RV0 = 500;
const ALL = { labels: [], fields: [] };

function setup() {
  const sources = new FakeSources();
  const store = new NodeLoadStore(sources, { initialResourceVersion: RV0 });
  sources.set('a', [], { zone: 'west' });
  sources.set('b', [], { zone: 'east' });
  store.refreshAll(); // RV0+1, RV0+2
  return { sources, store };
}

describe('watchStart', () => {
  it.each([undefined, '', '0'])('opens with ADDED for every current object when resourceVersion=%j', (rv) => {
    const { store } = setup();
    const start = watchStart(store, { filter: ALL, resourceVersion: rv, allowBookmarks: false });
    expect(start.ok && start.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'ADDED a',
      'ADDED b',
    ]);
    expect(start.ok && start.initialEventsEnd).toBe(false);
  });

  it('replays only what changed after a list resourceVersion (kubectl get -w)', () => {
    const { sources, store } = setup();
    const listRv = store.resourceVersion;
    sources.set('a', [{ cpu: '1' }], { zone: 'west' });
    store.refresh(['a']);
    const start = watchStart(store, { filter: ALL, resourceVersion: listRv, allowBookmarks: false });
    expect(start.ok && start.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'MODIFIED a',
    ]);
  });

  it('ends the initial events with a bookmark when asked to (sendInitialEvents)', () => {
    const { store } = setup();
    const start = watchStart(store, {
      filter: ALL,
      resourceVersion: '',
      sendInitialEvents: true,
      allowBookmarks: true,
    });
    expect(start.ok && start.initialEventsEnd).toBe(true);
    expect(bookmark('9', true)).toEqual({
      type: 'BOOKMARK',
      object: {
        kind: 'NodeLoad',
        apiVersion: 'nodeload.example.com/v1alpha1',
        metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } },
      },
    });
  });

  it.each([String(RV0 - 1), String(RV0 + 99)])(
    'answers 410 Expired for a version it cannot replay (%s)',
    (rv) => {
      const { store } = setup();
      const start = watchStart(store, { filter: ALL, resourceVersion: rv, allowBookmarks: false });
      expect(start.ok).toBe(false);
      expect(!start.ok && start.status).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    },
  );

  it('rejects a resourceVersion that is not a number', () => {
    const { store } = setup();
    expect(() => watchStart(store, { filter: ALL, resourceVersion: 'abc', allowBookmarks: false })).toThrow(
      'resourceVersion',
    );
  });
});

describe('filterEvent', () => {
  it('turns label changes across the selector into ADDED and DELETED', () => {
    const { sources, store } = setup();
    const events: string[] = [];
    const filter = { labels: parseLabelSelector('zone=west'), fields: [] };
    store.subscribe((e) => {
      const seen = filterEvent(e, filter);
      if (seen)
        events.push(`${seen.type} ${seen.object.metadata.name} ${seen.object.metadata.labels?.['zone']}`);
    });
    sources.set('b', [], { zone: 'west' }); // starts matching
    store.refresh(['b']);
    sources.set('b', [{ cpu: '1' }], { zone: 'west' }); // still matching
    store.refresh(['b']);
    sources.set('b', [{ cpu: '1' }], { zone: 'east' }); // stops matching: last matching state
    store.refresh(['b']);
    sources.set('b', [{ cpu: '2' }], { zone: 'east' }); // never seen
    store.refresh(['b']);
    sources.remove('a');
    store.refresh(['a']);
    expect(events).toEqual(['ADDED b west', 'MODIFIED b west', 'DELETED b west', 'DELETED a west']);
  });

  it('keeps to one object with a metadata.name field selector', () => {
    const { sources, store } = setup();
    const filter = { labels: [], fields: parseFieldSelector('metadata.name=b') };
    const seen: string[] = [];
    store.subscribe((e) => {
      const s = filterEvent(e, filter);
      if (s) seen.push(s.object.metadata.name);
    });
    sources.set('a', [{ cpu: '1' }]);
    sources.set('b', [{ cpu: '1' }]);
    store.refreshAll();
    expect(seen).toEqual(['b']);
  });
});

describe('defaultWatchTimeoutMs', () => {
  it('spreads watches over 30–60 minutes', () => {
    expect(defaultWatchTimeoutMs(() => 0)).toBe(1_800_000);
    expect(defaultWatchTimeoutMs(() => 0.999)).toBeLessThan(3_600_000);
  });
});
