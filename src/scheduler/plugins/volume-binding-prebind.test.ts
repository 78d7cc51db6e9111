/**
 * VolumeBinding's PreBind with a fake VolumeBinder and a storage view the test moves as the PV
 * controller and a provisioner would: the writes upstream's bindAPIUpdate makes, the wait for every
 * claim to be fully bound (checkBindings), and its failures — a provisioner giving up, a reset claimRef,
 * the pod deleted, a failed write, the timeout, an abort — each rolled back.
 */
import { describe, expect, it } from 'vitest';
import type { ClaimInfo, PodInfo, VolumeInfo } from '../../cluster/model.js';
import type { VolumeBinder } from '../volume-binder.js';
import { claim, type FakeStorage, node, pod, pv, runFilter, storage } from './volume.testing.js';
import { volumeBinding } from './volume-binding.js';
import { TIMEOUT_MESSAGE } from './volume-binding-prebind.js';
import { ANN_BIND_COMPLETED, ANN_SELECTED_NODE } from './volume-common.js';

let rv = 100;
const next = () => String(++rv);

/** Records the calls; each write lands in the storage view as the watch would deliver it. */
function fakeBinder(s: FakeStorage, fail?: 'bind' | 'select'): { binder: VolumeBinder; calls: string[] } {
  const calls: string[] = [];
  const binder: VolumeBinder = {
    async bindVolume(v, c) {
      calls.push(`bind ${v.name}→${c.name}`);
      if (fail === 'bind') throw new Error(`binding PV ${v.name}: conflict`);
      const w: VolumeInfo = {
        ...v,
        resourceVersion: next(),
        claimRef: { namespace: c.namespace, name: c.name, uid: c.uid },
      };
      s.put(w);
      return w;
    },
    async selectNode(c, n) {
      calls.push(`select ${c.name}@${n}`);
      if (fail === 'select') throw new Error(`selecting node ${n}: forbidden`);
      const w: ClaimInfo = {
        ...c,
        resourceVersion: next(),
        annotations: { ...c.annotations, [ANN_SELECTED_NODE]: n },
      };
      s.put(w);
      return w;
    },
    async unbindVolume(w, c) {
      calls.push(`unbind ${w.name}→${c.name}`);
    },
    async unselectNode(w, n) {
      calls.push(`unselect ${w.name}@${n}`);
    },
  };
  return { binder, calls };
}

/** What the PV controller does once a PV names a claim: the claim gets volumeName + bind-completed. */
function completeBind(s: FakeStorage, claimName: string, pvName: string): void {
  const c = s.claims.get(`default/${claimName}`) as ClaimInfo;
  s.put({
    ...c,
    resourceVersion: next(),
    volumeName: pvName,
    phase: 'Bound',
    annotations: { ...c.annotations, [ANN_BIND_COMPLETED]: 'yes' },
  });
}

interface Setup {
  s: FakeStorage;
  calls: string[];
  p: PodInfo;
  /** Runs PreFilter → Filter → Reserve on node a, then PreBind; resolves with PreBind's result. */
  preBind(signal?: AbortSignal): Promise<string | undefined>;
}

function setup(o: {
  claims: ClaimInfo[];
  pvs?: VolumeInfo[];
  fail?: 'bind' | 'select';
  timeoutSeconds?: number;
  noBinder?: boolean;
}): Setup {
  const p = pod(
    'p',
    o.claims.map((c) => c.name),
  );
  const s = storage({ claims: o.claims, pvs: o.pvs ?? [], pods: [p] });
  const { binder, calls } = fakeBinder(s, o.fail);
  const plugin = volumeBinding(
    { bindTimeoutSeconds: o.timeoutSeconds ?? 5 },
    { storage: s, ...(o.noBinder ? {} : { binder }) },
  );
  return {
    s,
    calls,
    p,
    async preBind(signal = new AbortController().signal) {
      const r = runFilter(plugin, [node('a')], [], p);
      expect(r.outcome).toEqual({ a: 'ok' });
      expect(plugin.reserve(r.state, r.ctx, 'a')).toBeUndefined();
      return plugin.preBind(r.state, r.ctx, 'a', signal);
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('VolumeBinding PreBind', () => {
  it('nothing to bind: no writes', async () => {
    const t = setup({
      claims: [claim('data', { volumeName: 'pv', bound: true })],
      pvs: [pv('pv', { claimRef: 'data' })],
    });
    expect(await t.preBind()).toBeUndefined();
    expect(t.calls).toEqual([]);
  });

  it('static binding: sets the claimRef, then waits for the PV controller', async () => {
    const t = setup({ claims: [claim('data')], pvs: [pv('pv-a', { hosts: ['a'] })] });
    const done = t.preBind();
    await tick();
    expect(t.calls).toEqual(['bind pv-a→data']);
    let settled = false;
    void done.then(() => (settled = true));
    await tick();
    expect(settled).toBe(false);
    completeBind(t.s, 'data', 'pv-a');
    expect(await done).toBeUndefined();
  });

  it('dynamic provisioning: sets selected-node, then waits for the provisioned PV to be bound', async () => {
    const t = setup({ claims: [claim('data', { class: 'dynamic' })] });
    const done = t.preBind();
    await tick();
    expect(t.calls).toEqual(['select data@a']);
    expect(t.s.claims.get('default/data')?.annotations[ANN_SELECTED_NODE]).toBe('a');
    // The provisioner's PV arrives with the claim bound to it.
    t.s.put(pv('pvc-123', { class: 'dynamic', hosts: ['a'], claimRef: 'data', rv: next() }));
    completeBind(t.s, 'data', 'pvc-123');
    expect(await done).toBeUndefined();
  });

  it('a provisioner that gives up removes selected-node: error, rolled back', async () => {
    const t = setup({ claims: [claim('data', { class: 'dynamic' })] });
    const done = t.preBind();
    await tick();
    const c = t.s.claims.get('default/data') as ClaimInfo;
    const { [ANN_SELECTED_NODE]: _gone, ...rest } = c.annotations;
    t.s.put({ ...c, resourceVersion: next(), annotations: rest });
    expect(await done).toBe('binding volumes: provisioning failed for PVC "data"');
    expect(t.calls).toEqual(['select data@a', 'unselect data@a']);
  });

  it('a provisioned PV that does not fit the node is an error', async () => {
    const t = setup({ claims: [claim('data', { class: 'dynamic' })] });
    const done = t.preBind();
    await tick();
    t.s.put(pv('pvc-1', { class: 'dynamic', hosts: ['elsewhere'], claimRef: 'data', rv: next() }));
    completeBind(t.s, 'data', 'pvc-1');
    expect(await done).toBe(`binding volumes: pv "pvc-1" node affinity doesn't match node "a"`);
  });

  it('the PV controller dropping the claimRef is an error', async () => {
    const t = setup({ claims: [claim('data')], pvs: [pv('pv-a')] });
    const done = t.preBind();
    await tick();
    const v = t.s.volumes.get('pv-a') as VolumeInfo;
    const { claimRef: _dropped, ...unbound } = v;
    t.s.put({ ...unbound, resourceVersion: next() });
    expect(await done).toBe('binding volumes: ClaimRef got reset for pv "pv-a"');
    expect(t.calls).toEqual(['bind pv-a→data', 'unbind pv-a→data']);
  });

  it('an older cached PV is waited out, not judged', async () => {
    const t = setup({ claims: [claim('data')], pvs: [pv('pv-a')] });
    const done = t.preBind();
    await tick();
    // A stale copy (the version before our write) shows up: no claimRef, but older than what we wrote.
    t.s.put(pv('pv-a', { rv: '20' }));
    await tick();
    t.s.put(pv('pv-a', { claimRef: 'data', phase: 'Bound', rv: next() }));
    completeBind(t.s, 'data', 'pv-a');
    expect(await done).toBeUndefined();
  });

  it('the pod deleted meanwhile', async () => {
    const t = setup({ claims: [claim('data')], pvs: [pv('pv-a')] });
    const done = t.preBind();
    await tick();
    t.s.pods.delete('default/p');
    t.s.changed();
    expect(await done).toBe('binding volumes: pod does not exist any more');
  });

  it('a failed write: error, the writes before it rolled back', async () => {
    const t = setup({
      claims: [claim('one'), claim('two', { class: 'dynamic' })],
      pvs: [pv('pv-1')],
      fail: 'select',
    });
    expect(await t.preBind()).toBe('binding volumes: selecting node a: forbidden');
    expect(t.calls).toEqual(['bind pv-1→one', 'select two@a', 'unbind pv-1→one']);
  });

  it('the timeout: error, rolled back', async () => {
    const t = setup({ claims: [claim('data', { class: 'dynamic' })], timeoutSeconds: 0.05 });
    expect(await t.preBind()).toBe(`binding volumes: ${TIMEOUT_MESSAGE}`);
    expect(t.calls).toEqual(['select data@a', 'unselect data@a']);
  });

  it('an abort (leadership lost) ends the wait, rolled back', async () => {
    const t = setup({ claims: [claim('data')], pvs: [pv('pv-a')] });
    const ac = new AbortController();
    const done = t.preBind(ac.signal);
    await tick();
    ac.abort();
    expect(await done).toMatch(/^binding volumes: aborted/);
    expect(t.calls).toEqual(['bind pv-a→data', 'unbind pv-a→data']);
  });

  it('a PV the user pre-bound to the claim keeps its claimRef on rollback', async () => {
    const prebound = pv('pv-mine', { claimRef: 'data', phase: 'Available' });
    const t = setup({
      claims: [claim('data')],
      pvs: [{ ...prebound, claimRef: { namespace: 'default', name: 'data', uid: '' } }],
      timeoutSeconds: 0.05,
    });
    expect(await t.preBind()).toBe(`binding volumes: ${TIMEOUT_MESSAGE}`);
    expect(t.calls).toEqual(['bind pv-mine→data']);
  });

  it('no binder configured', async () => {
    const t = setup({ claims: [claim('data')], pvs: [pv('pv-a')], noBinder: true });
    expect(await t.preBind()).toBe('binding volumes: no volume binder configured');
  });
});
