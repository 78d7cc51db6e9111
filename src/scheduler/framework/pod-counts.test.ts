import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../cluster/model.js';
import { specPod } from '../plugins/plugin.testing.js';
import { node } from '../testing.js';
import { PodCountIndex, type PodMatcher } from './pod-counts.js';
import { Snapshot } from './snapshot.js';

const web = (ns: string | undefined): PodMatcher => ({
  key: `web|${ns ?? '*'}`,
  namespaces: ns === undefined ? undefined : new Set([ns]),
  matches: (p) => (ns === undefined || p.namespace === ns) && p.labels['app'] === 'web',
});

function pod(name: string, nodeName: string | undefined, app: string, ns = 'default'): PodInfo {
  return specPod(name, { nodeName }, { meta: { namespace: ns, labels: { app } } });
}

function snapshot(): Snapshot {
  const s = new Snapshot();
  for (const n of ['a', 'b']) s.setNode(node(n, { labels: { zone: 'z1' } }));
  return s;
}

const counts = (s: Snapshot, m: PodMatcher) => Object.fromEntries(s.podCounts(m));

describe('PodCountIndex through the Snapshot', () => {
  const cases: {
    name: string;
    run: (s: Snapshot) => void;
    want: Record<string, number>;
    matcher?: PodMatcher;
  }[] = [
    {
      name: 'add: matching pods per node, other labels and namespaces not counted',
      run: (s) => {
        s.upsertPod(pod('w1', 'a', 'web'));
        s.upsertPod(pod('w2', 'a', 'web'));
        s.upsertPod(pod('w3', 'b', 'web'));
        s.upsertPod(pod('db', 'b', 'db'));
        s.upsertPod(pod('other', 'b', 'web', 'other'));
      },
      want: { a: 2, b: 1 },
    },
    {
      name: 'a matcher over every namespace counts them all',
      matcher: web(undefined),
      run: (s) => {
        s.upsertPod(pod('w1', 'a', 'web'));
        s.upsertPod(pod('other', 'b', 'web', 'other'));
      },
      want: { a: 1, b: 1 },
    },
    {
      name: 'remove: a node whose count reaches 0 disappears',
      run: (s) => {
        s.upsertPod(pod('w1', 'a', 'web'));
        s.upsertPod(pod('w3', 'b', 'web'));
        s.deletePod(pod('w3', 'b', 'web'));
      },
      want: { a: 1 },
    },
    {
      name: 'assume counts at once, forget takes it back, the bind confirmation keeps one',
      run: (s) => {
        s.assume(pod('kept', undefined, 'web'), 'a');
        s.upsertPod(pod('kept', 'a', 'web'));
        s.assume(pod('gone', undefined, 'web'), 'b');
        s.forget('default/gone');
      },
      want: { a: 1 },
    },
    {
      name: 'a pod label change moves it in and out of the count',
      run: (s) => {
        s.upsertPod(pod('in', 'a', 'db'));
        s.upsertPod(pod('in', 'a', 'web'));
        s.upsertPod(pod('out', 'b', 'web'));
        s.upsertPod(pod('out', 'b', 'db'));
      },
      want: { a: 1 },
    },
    {
      name: 'node label changes do not touch counts kept per node name; pods of unknown nodes are counted under it',
      run: (s) => {
        s.upsertPod(pod('w1', 'a', 'web'));
        s.setNode(node('a', { labels: { zone: 'z2' } }));
        s.upsertPod(pod('early', 'late', 'web'));
      },
      want: { a: 1, late: 1 },
    },
    {
      name: 'terminal pods are not counted pods',
      run: (s) => {
        s.upsertPod(pod('w1', 'a', 'web'));
        s.upsertPod({ ...pod('w1', 'a', 'web'), terminal: true });
      },
      want: {},
    },
  ];
  // Every case twice more with the matcher indexed by its anchor (every match carries app=web).
  const anchored = (m: PodMatcher): PodMatcher => ({ ...m, key: `${m.key}|anchored`, anchors: ['app=web'] });
  for (const c of cases) {
    for (const when of ['asked first', 'asked last'] as const) {
      for (const indexed of [false, true]) {
        it(`${c.name} (${when}${indexed ? ', by anchor' : ''})`, () => {
          const s = snapshot();
          const plain = c.matcher ?? web('default');
          const m = indexed ? anchored(plain) : plain;
          if (when === 'asked first') counts(s, m);
          c.run(s);
          expect(counts(s, m)).toEqual(c.want);
        });
      }
    }
  }

  it('tests an anchored matcher only against pods carrying its anchor label', () => {
    const s = snapshot();
    const tested: string[] = [];
    const m: PodMatcher = {
      key: 'web-anchored',
      namespaces: new Set(['default']),
      anchors: ['app=web'],
      matches: (p) => {
        tested.push(p.name);
        return p.namespace === 'default' && p.labels['app'] === 'web';
      },
    };
    counts(s, m);
    s.upsertPod(pod('w1', 'a', 'web'));
    s.upsertPod(pod('db', 'b', 'db'));
    s.upsertPod(pod('w2', 'b', 'web', 'other'));
    expect(tested).toEqual(['w1', 'w2']);
    expect(counts(s, m)).toEqual({ a: 1 });
  });

  it('indexes a matcher by the anchor fewest pods carry, and moves it when another becomes rarer', () => {
    const s = snapshot();
    const shop = (name: string, nodeName: string, shard: string) =>
      specPod(name, { nodeName }, { meta: { namespace: 'default', labels: { app: 'shop', shard } } });
    const tested: string[] = [];
    const m: PodMatcher = {
      key: 'shop-7',
      namespaces: new Set(['default']),
      // The shared label first, as a selector usually lists it.
      anchors: ['app=shop', 'shard=7'],
      matches: (p) => {
        tested.push(p.name);
        return p.labels['app'] === 'shop' && p.labels['shard'] === '7';
      },
    };
    // Asked while neither label is carried: the first anchor, app=shop, is as good as any.
    expect(counts(s, m)).toEqual({});
    for (let i = 0; i < 5; i++) s.upsertPod(shop(`s1-${i}`, 'a', '1'));
    s.upsertPod(shop('s7-0', 'b', '7'));
    expect(tested).toEqual(['s1-0', 's1-1', 's1-2', 's1-3', 's1-4', 's7-0']);
    // Asked again: shard=7 (1 pod) is now rarer than app=shop (6), so other shards' pods are not tested.
    expect(counts(s, m)).toEqual({ b: 1 });
    tested.length = 0;
    s.upsertPod(shop('s1-5', 'b', '1'));
    s.upsertPod(shop('s7-1', 'a', '7'));
    s.deletePod(shop('s7-0', 'b', '7'));
    expect(tested).toEqual(['s7-1', 's7-0']);
    expect(counts(s, m)).toEqual({ a: 1 });
    // Built fresh when pods already carry both labels: the rarer anchor at once.
    const fresh: string[] = [];
    const again: PodMatcher = {
      ...m,
      key: 'shop-7-fresh',
      matches: (p) => {
        fresh.push(p.name);
        return m.matches(p);
      },
    };
    expect(counts(s, again)).toEqual({ a: 1 });
    expect(fresh).toEqual(['s7-1']);
  });

  it('a what-if edit counts its changes and undo restores the counts exactly', () => {
    const s = snapshot();
    s.upsertPod(pod('w1', 'a', 'web'));
    const m = web('default');
    expect(counts(s, m)).toEqual({ a: 1 });
    const edit = s.edit();
    edit.remove('default/w1');
    edit.add('default/x', pod('x', 'b', 'web'), 'b');
    expect(counts(s, m)).toEqual({ b: 1 });
    edit.undo();
    expect(counts(s, m)).toEqual({ a: 1 });
  });

  it('drops the least recently asked matcher beyond its capacity and rebuilds it when asked again', () => {
    const pods: [PodInfo, string][] = [];
    const index = new PodCountIndex(
      function* (ns) {
        for (const e of pods) if (ns === undefined || e[0].namespace === ns) yield e;
      },
      () => 0,
      2,
    );
    const add = (p: PodInfo, n: string) => {
      pods.push([p, n]);
      index.changed(p, n, 1);
    };
    const m1 = web('default');
    const m2 = web('other');
    const m3 = web(undefined);
    add(pod('w1', 'a', 'web'), 'a');
    expect(Object.fromEntries(index.counts(m1))).toEqual({ a: 1 });
    index.counts(m2);
    index.counts(m1);
    index.counts(m3);
    expect(index.size).toBe(2);
    // m2 was dropped: pods added now are not tested against it, and asking again rebuilds it.
    add(pod('o1', 'b', 'web', 'other'), 'b');
    expect(Object.fromEntries(index.counts(m2))).toEqual({ b: 1 });
    expect(Object.fromEntries(index.counts(m1))).toEqual({ a: 1 });
    expect(index.size).toBe(2);
  });
});
