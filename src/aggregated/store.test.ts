import { describe, expect, it } from 'vitest';
import { nodeLoadObject } from './nodeloads.js';
import { NodeLoadStore, type StoreEvent } from './store.js';
import { FakeSources, rule } from './testing.js';

const RV0 = 1000;

function setup(historySize?: number) {
  const sources = new FakeSources();
  const store = new NodeLoadStore(sources, {
    initialResourceVersion: RV0,
    ...(historySize ? { historySize } : {}),
  });
  const events: StoreEvent[] = [];
  store.subscribe((e) => events.push(e));
  return { sources, store, events };
}

describe('NodeLoadStore', () => {
  it('adds, modifies and deletes, bumping one resourceVersion per change', () => {
    const { sources, store, events } = setup();
    sources.set('a');
    sources.set('b');
    store.refreshAll();
    expect(events.map((e) => [e.type, e.object.metadata.name, e.resourceVersion])).toEqual([
      ['ADDED', 'a', RV0 + 1],
      ['ADDED', 'b', RV0 + 2],
    ]);
    sources.set('a', [{ cpu: '1' }]);
    store.refresh(['a']);
    sources.remove('b');
    store.refresh(['b']);
    expect(
      events.slice(2).map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion]),
    ).toEqual([
      ['MODIFIED', 'a', String(RV0 + 3)],
      ['DELETED', 'b', String(RV0 + 4)],
    ]);
    expect(events[2]?.previous?.status.pods).toBe(0);
    expect(store.resourceVersion).toBe(String(RV0 + 4));
    expect([...store.list()].map((o) => o.metadata.name)).toEqual(['a']);
    expect(store.get('a')?.status.pods).toBe(1);
  });

  it('does not bump the version when nothing changed', () => {
    const { sources, store, events } = setup();
    sources.set('a');
    store.refreshAll();
    store.refreshAll();
    store.refresh(['a', 'never-existed']);
    expect(events).toHaveLength(1);
    expect(store.resourceVersion).toBe(String(RV0 + 1));
  });

  it('rebuilds eligibility when rules change', () => {
    const { sources, store, events } = setup();
    sources.set('a', [{ cpu: '3900m' }]);
    store.refreshAll();
    sources.ruleList = [rule('team', 'strict')];
    store.refreshAll();
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
    expect(store.get('a')?.status.ineligibleRules).toEqual([
      { namespace: 'team', name: 'strict', reasons: ['cpu 97.5% > maxCPU 80%'] },
    ]);
  });

  it('serves a node only once it has a load figure', () => {
    const { sources, store, events } = setup();
    sources.set('a');
    sources.loads.delete('a');
    expect([...store.list()]).toEqual([]);
    expect(events).toHaveLength(0);
  });

  it('reports a change applied while reading the load once, not twice', () => {
    const { sources, store, events } = setup();
    sources.set('a');
    store.refreshAll();
    // The tracker applies a pending change on loadOf and emits; the component refreshes on that event.
    let nested = false;
    sources.onLoadOf = (name) => {
      if (nested) return;
      nested = true;
      sources.set(name, [{ cpu: '1' }]);
      store.refresh([name]);
    };
    store.refresh(['a']);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
  });

  it('replays the events after a resourceVersion, and refuses versions it cannot replay', () => {
    const { sources, store } = setup(2);
    for (const [i, name] of ['a', 'b', 'c'].entries()) {
      sources.set(name, [{ cpu: `${i + 1}` }]);
      store.refresh([name]);
    }
    // History holds the last 2 events (RV0+2, RV0+3): a watch from RV0+1 on is complete.
    const since = store.eventsSince(RV0 + 1);
    expect(since.ok && since.events.map((e) => e.resourceVersion)).toEqual([RV0 + 2, RV0 + 3]);
    const current = store.eventsSince(RV0 + 3);
    expect(current.ok && current.events).toEqual([]);
    expect(store.eventsSince(RV0)).toEqual({ ok: false, reason: 'expired' });
    expect(store.eventsSince(RV0 + 4)).toEqual({ ok: false, reason: 'future' });
  });

  it('starts versions at the start time, so a restarted store never reuses old versions', () => {
    const before = Date.now() * 1000;
    const store = new NodeLoadStore(new FakeSources());
    expect(Number(store.resourceVersion)).toBeGreaterThanOrEqual(before);
    expect(Number.isSafeInteger(Number(store.resourceVersion))).toBe(true);
  });

  it('keeps delivering to other subscribers when one throws', () => {
    const { sources, store, events } = setup();
    store.subscribe(() => {
      throw new Error('broken watcher');
    });
    const after: string[] = [];
    store.subscribe((e) => after.push(e.type));
    sources.set('a');
    store.refreshAll();
    expect(events).toHaveLength(1);
    expect(after).toEqual(['ADDED']);
  });
});

/** A store whose builds are counted, with nodes a, b and c and nobody watching. */
function counted() {
  const sources = new FakeSources();
  const built: string[] = [];
  const store = new NodeLoadStore(sources, {
    initialResourceVersion: RV0,
    build: (node, load, rules, rv) => {
      built.push(node.name);
      return nodeLoadObject(node, load, rules, rv);
    },
  });
  for (const name of ['a', 'b', 'c']) sources.set(name);
  return { sources, store, built };
}

const byName = (store: NodeLoadStore) => new Map([...store.list()].map((o) => [o.metadata.name, o] as const));

describe('NodeLoadStore, lazily', () => {
  it('does no work on changes while nobody watches; the next read builds only what changed', () => {
    const { sources, store, built } = counted();
    const first = byName(store);
    const listRv = Number(store.resourceVersion);
    expect(built.sort()).toEqual(['a', 'b', 'c']);

    sources.set('a', [{ cpu: '1' }]);
    store.nodeChanged('a');
    store.allChanged();
    expect(built).toHaveLength(3);
    expect(Number(store.resourceVersion)).toBe(listRv);

    const second = byName(store);
    expect(built.slice(3)).toEqual(['a']);
    expect(second.get('b')).toBe(first.get('b'));
    expect(second.get('c')).toBe(first.get('c'));
    expect(second.get('a')?.status.pods).toBe(1);
    expect(Number(second.get('a')?.metadata.resourceVersion)).toBe(listRv + 1);
    expect(store.resourceVersion).toBe(String(listRv + 1));
  });

  it.each([
    ['the same records', () => {}],
    [
      'new records with the same figures (a tracker recompute, a node heartbeat)',
      (s: FakeSources) => s.set('b'),
    ],
  ])('does not build an unchanged node again: %s', (_what, touch) => {
    const { sources, store, built } = counted();
    byName(store);
    const before = store.get('b');
    touch(sources);
    const rv = store.resourceVersion;
    expect(store.get('b')).toBe(before);
    expect(byName(store).get('b')).toBe(before);
    expect(built.filter((n) => n === 'b')).toHaveLength(1);
    expect(store.resourceVersion).toBe(rv);
  });

  it.each([
    ['its load', (s: FakeSources) => s.set('b', [{ memory: '1Gi' }])],
    ['its labels', (s: FakeSources) => s.set('b', [], { zone: 'east' })],
  ])('builds a node again when %s changed', (_what, change) => {
    const { sources, store, built } = counted();
    const before = store.get('b');
    change(sources);
    const after = store.get('b');
    expect(after).not.toBe(before);
    expect(built.filter((n) => n === 'b')).toHaveLength(2);
    expect(Number(after?.metadata.resourceVersion)).toBeGreaterThan(Number(before?.metadata.resourceVersion));
  });

  it('rebuilds every node when the rules change in content, not when the same rules come in new records', () => {
    const { sources, store, built } = counted();
    sources.ruleList = [rule('team', 'r', { maxCPU: 50 })];
    byName(store);
    expect(built).toHaveLength(3);
    sources.ruleList = [rule('team', 'r', { maxCPU: 50 })];
    byName(store);
    expect(built).toHaveLength(3);
    sources.ruleList = [rule('team', 'r', { maxCPU: 60 })];
    byName(store);
    expect(built).toHaveLength(6);
  });

  it('while a watch is open, emits at once and only for the nodes that changed', () => {
    const { sources, store, built } = counted();
    byName(store);
    const events: string[] = [];
    const unsubscribe = store.subscribe((e) => events.push(`${e.type} ${e.object.metadata.name}`));
    sources.set('a', [{ cpu: '1' }]);
    sources.set('b'); // same figures
    for (const name of ['a', 'b', 'c']) store.nodeChanged(name);
    sources.remove('c');
    store.nodeChanged('c');
    expect(events).toEqual(['MODIFIED a', 'DELETED c']);
    expect(built.slice(3)).toEqual(['a']);

    unsubscribe();
    sources.set('a', [{ cpu: '2' }]);
    store.nodeChanged('a');
    expect(built).toHaveLength(4);
  });

  it('replays to a watch from an older list version what changed while nobody watched', () => {
    const { sources, store } = counted();
    byName(store);
    const listRv = Number(store.resourceVersion);
    sources.set('c', [{ cpu: '1' }]);
    sources.set('d');
    const since = store.eventsSince(listRv);
    expect(since.ok && since.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['MODIFIED', 'c'],
      ['ADDED', 'd'],
    ]);
    expect(since.ok && since.events.every((e) => e.resourceVersion > listRv)).toBe(true);
    // A list never shows an object newer than its own version.
    const list = [...store.list()];
    const rv = Number(store.resourceVersion);
    expect(list.every((o) => Number(o.metadata.resourceVersion) <= rv)).toBe(true);
  });

  it('answers 410 to a watch from before more unseen changes than the history holds', () => {
    const sources = new FakeSources();
    const store = new NodeLoadStore(sources, { initialResourceVersion: RV0, historySize: 2 });
    sources.set('a');
    store.list();
    const listRv = Number(store.resourceVersion);
    for (const name of ['b', 'c', 'd']) sources.set(name);
    expect(store.eventsSince(listRv)).toEqual({ ok: false, reason: 'expired' });
  });
});
