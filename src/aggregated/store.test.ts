import { describe, expect, it } from 'vitest';
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
    store.refreshAll();
    expect(store.size).toBe(0);
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
