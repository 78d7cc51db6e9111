import { describe, expect, it } from 'vitest';
import { podKey } from '../../cluster/model.js';
import { container, specPod } from '../plugins/plugin.testing.js';
import { node, pod } from '../testing.js';
import { Snapshot } from './snapshot.js';

const bound = (name: string, nodeName: string, requests: Record<string, string> = {}) =>
  specPod(name, { nodeName, containers: [container('c', requests)] });
const withAffinity = (
  name: string,
  nodeName: string,
  kind: 'podAffinity' | 'podAntiAffinity',
  required: boolean,
) => {
  const term = { labelSelector: { matchLabels: { app: 'x' } }, topologyKey: 'kubernetes.io/hostname' };
  return specPod(name, {
    nodeName,
    affinity: {
      [kind]: required
        ? { requiredDuringSchedulingIgnoredDuringExecution: [term] }
        : { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: term }] },
    },
  });
};

function snapshot(...nodes: string[]): Snapshot {
  const s = new Snapshot();
  for (const n of nodes) s.setNode(node(n));
  return s;
}

describe('Snapshot nodes', () => {
  it('counts the nodes holding each image name as nodes arrive, change their images and leave', () => {
    const img = (...names: string[]) => ({ names, sizeBytes: 1 });
    const s = new Snapshot();
    const counts = (...names: string[]) => names.map((n) => s.nodesWithImage(n));
    s.setNode({ ...node('a'), images: [img('nginx:1', 'nginx@sha256:1'), img('redis:7')] });
    s.setNode({ ...node('b'), images: [img('nginx:1')] });
    expect(counts('nginx:1', 'nginx@sha256:1', 'redis:7')).toEqual([2, 1, 1]);
    // A status update with other images replaces the node's share; one with none leaves none.
    s.setNode({ ...node('a'), images: [img('redis:7')] });
    expect(counts('nginx:1', 'nginx@sha256:1', 'redis:7')).toEqual([1, 0, 1]);
    s.deleteNode('b');
    s.setNode({ ...node('a'), images: [] });
    expect(counts('nginx:1', 'redis:7')).toEqual([0, 0]);
  });

  it('lists nodes in insertion order, drops deleted ones and keeps their pods for a re-added node', () => {
    const s = snapshot('b', 'a');
    s.upsertPod(bound('p', 'a', { cpu: '1' }));
    expect(s.list().map((n) => n.name)).toEqual(['b', 'a']);
    expect(s.size).toBe(2);
    s.deleteNode('a');
    expect(s.list().map((n) => n.name)).toEqual(['b']);
    expect(s.get('a')).toBeUndefined();
    s.setNode(node('a'));
    expect(s.get('a')?.requested).toEqual({ cpu: 1000 });
    expect(s.get('a')?.podCount).toBe(1);
  });

  it('holds pods of a node it has not seen yet, and shows them once the node arrives', () => {
    const s = snapshot();
    s.upsertPod(bound('p', 'late', { cpu: '500m' }));
    expect(s.list()).toEqual([]);
    s.setNode(node('late'));
    expect(s.get('late')?.requested).toEqual({ cpu: 500 });
  });

  it('replaces the node object on update without losing its pods', () => {
    const s = snapshot('n');
    s.upsertPod(bound('p', 'n'));
    s.setNode(node('n', { labels: { zone: 'a' } }));
    expect(s.get('n')?.node?.labels).toEqual({ zone: 'a' });
    expect(s.get('n')?.podCount).toBe(1);
  });
});

describe('Snapshot pods', () => {
  it('sums requests per resource name and takes them back on delete', () => {
    const s = snapshot('n');
    const a = bound('a', 'n', { cpu: '1', memory: '1Gi', 'example.com/gpu': '1' });
    const b = bound('b', 'n', { cpu: '250m', 'ephemeral-storage': '2Gi' });
    s.upsertPod(a);
    s.upsertPod(b);
    const n = s.get('n');
    expect(n?.requested).toEqual({
      cpu: 1250,
      memory: 2 ** 30,
      'example.com/gpu': 1,
      'ephemeral-storage': 2 * 2 ** 30,
    });
    s.deletePod(a);
    expect(n?.requested).toEqual({ cpu: 250, 'ephemeral-storage': 2 * 2 ** 30 });
    s.deletePod(b);
    expect(n?.requested).toEqual({});
    expect(n?.podCount).toBe(0);
  });

  it('a status update swaps the record; an in-place resize changes the node’s requests', () => {
    const s = snapshot('n');
    s.upsertPod(bound('p', 'n', { cpu: '1' }));
    const running = { ...bound('p', 'n', { cpu: '1' }), phase: 'Running' };
    s.upsertPod(running);
    const n = s.get('n');
    expect(n?.pods.get('default/p')).toBe(running);
    expect(n?.requested).toEqual({ cpu: 1000 });
    s.upsertPod({ ...running, resourceRequests: { cpu: 2000 } });
    expect(n?.requested).toEqual({ cpu: 2000 });
    expect(n?.podCount).toBe(1);
  });

  it('moves a pod whose update names another node, counting it once', () => {
    const s = snapshot('a', 'b');
    s.upsertPod(bound('p', 'a', { cpu: '1' }));
    s.upsertPod(bound('p', 'b', { cpu: '1' }));
    expect(s.get('a')?.podCount).toBe(0);
    expect(s.get('b')?.requested).toEqual({ cpu: 1000 });
    expect(s.nodeOf('default/p')).toBe('b');
  });

  it('does not count pending pods, nor terminal ones (a pod finishing frees its room)', () => {
    const s = snapshot('n');
    s.upsertPod(pod('pending', { cpu: '1' }));
    expect(s.get('n')?.podCount).toBe(0);
    s.upsertPod(bound('job', 'n', { cpu: '2' }));
    expect(s.get('n')?.requested).toEqual({ cpu: 2000 });
    s.upsertPod(
      specPod('job', { nodeName: 'n', containers: [container('c', { cpu: '2' })] }, { phase: 'Succeeded' }),
    );
    expect(s.get('n')?.podCount).toBe(0);
    expect(s.get('n')?.requested).toEqual({});
    expect(s.nodeOf('default/job')).toBeUndefined();
    s.upsertPod(specPod('failed', { nodeName: 'n' }, { phase: 'Failed' }));
    expect(s.get('n')?.podCount).toBe(0);
  });

  it('counts pods without cpu or memory requests (LoadAware’s estimate)', () => {
    const s = snapshot('n');
    s.upsertPod(bound('be', 'n'));
    s.upsertPod(bound('gpu-only', 'n', { 'example.com/gpu': '1' }));
    s.upsertPod(bound('burstable', 'n', { memory: '1Mi' }));
    expect(s.get('n')?.noRequestPods).toBe(2);
    s.deletePod(bound('be', 'n'));
    expect(s.get('n')?.noRequestPods).toBe(1);
  });

  it('indexes host ports per pod', () => {
    const s = snapshot('n');
    const web = specPod('web', {
      nodeName: 'n',
      containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 8080 }] }],
    });
    s.upsertPod(web);
    s.upsertPod(bound('plain', 'n'));
    expect([...(s.get('n')?.usedPorts.entries() ?? [])]).toEqual([
      ['default/web', [{ hostIP: '', protocol: 'TCP', port: 8080 }]],
    ]);
    s.deletePod(web);
    expect(s.get('n')?.usedPorts.size).toBe(0);
  });

  it('keeps the pods with (anti-)affinity terms per node', () => {
    const s = snapshot('a', 'b');
    s.upsertPod(withAffinity('aff', 'a', 'podAffinity', true));
    s.upsertPod(withAffinity('soft-anti', 'b', 'podAntiAffinity', false));
    s.upsertPod(bound('plain', 'a'));
    expect([...(s.get('a')?.podsWithAffinity.keys() ?? [])]).toEqual(['default/aff']);
    expect([...(s.get('b')?.podsWithAffinity.keys() ?? [])]).toEqual(['default/soft-anti']);
    s.deletePod(withAffinity('aff', 'a', 'podAffinity', true));
    expect(s.get('a')?.podsWithAffinity.size).toBe(0);
  });

  it('bumps the node generation only when a node arrives, leaves, or changes labels or taints', () => {
    const s = snapshot('a');
    const g0 = s.nodeGeneration;
    s.setNode(node('a'));
    s.upsertPod(bound('p', 'a'));
    expect(s.nodeGeneration).toBe(g0);
    s.setNode(node('a', { labels: { zone: 'z1' } }));
    expect(s.nodeGeneration).toBe(g0 + 1);
    s.setNode(node('a', { labels: { zone: 'z1' }, taints: [{ key: 'k', effect: 'NoSchedule' }] }));
    expect(s.nodeGeneration).toBe(g0 + 2);
    s.setNode(node('b'));
    expect(s.nodeGeneration).toBe(g0 + 3);
    s.deleteNode('b');
    expect(s.nodeGeneration).toBe(g0 + 4);
  });

  it('counts claims in use per namespace/claim', () => {
    const s = snapshot('n');
    const vol = (name: string) =>
      specPod(name, {
        nodeName: 'n',
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }],
      });
    s.upsertPod(vol('a'));
    s.upsertPod(vol('b'));
    expect(s.get('n')?.claims.get('default/data')).toBe(2);
    s.deletePod(vol('a'));
    expect(s.get('n')?.claims.get('default/data')).toBe(1);
    s.deletePod(vol('b'));
    expect(s.get('n')?.claims.has('default/data')).toBe(false);
  });
});

describe('Snapshot assumptions', () => {
  const p = pod('p', { cpu: '1' });
  const key = podKey(p);

  it('counts an assumed pod on its node at once, as bound there', () => {
    const s = snapshot('n');
    s.upsertPod(p);
    s.assume(p, 'n');
    expect(s.isAssumed(key)).toBe(true);
    expect(s.nodeOf(key)).toBe('n');
    expect(s.get('n')?.requested).toEqual({ cpu: 1000 });
    expect(s.get('n')?.pods.get(key)?.nodeName).toBe('n');
  });

  it('forget takes the assumption back', () => {
    const s = snapshot('n');
    s.assume(p, 'n');
    s.forget(key);
    expect(s.isAssumed(key)).toBe(false);
    expect(s.get('n')?.podCount).toBe(0);
    expect(s.nodeOf(key)).toBeUndefined();
  });

  it('a status-only update of an assumed pod (still unbound) keeps the assumption', () => {
    const s = snapshot('n');
    s.assume(p, 'n');
    s.upsertPod({ ...p, scheduledCondition: { status: 'False', reason: 'Unschedulable' } });
    expect(s.isAssumed(key)).toBe(true);
    expect(s.get('n')?.podCount).toBe(1);
  });

  it('the informer confirms the bind: no longer assumed, counted once, and forget no longer removes it', () => {
    const s = snapshot('n');
    s.assume(p, 'n');
    s.upsertPod({ ...p, nodeName: 'n', phase: 'Running' });
    expect(s.isAssumed(key)).toBe(false);
    expect(s.get('n')?.podCount).toBe(1);
    expect(s.get('n')?.requested).toEqual({ cpu: 1000 });
    s.forget(key);
    expect(s.get('n')?.podCount).toBe(1);
  });

  it('the informer shows the pod bound elsewhere (another scheduler won): counted there only', () => {
    const s = snapshot('a', 'b');
    s.assume(p, 'a');
    s.upsertPod({ ...p, nodeName: 'b', phase: 'Running' });
    expect(s.get('a')?.podCount).toBe(0);
    expect(s.get('b')?.podCount).toBe(1);
    expect(s.isAssumed(key)).toBe(false);
  });

  it('a re-assumption moves the pod; a deletion drops the assumption', () => {
    const s = snapshot('a', 'b');
    s.assume(p, 'a');
    s.assume(p, 'b');
    expect(s.get('a')?.podCount).toBe(0);
    expect(s.get('b')?.podCount).toBe(1);
    s.deletePod(p);
    expect(s.isAssumed(key)).toBe(false);
    expect(s.get('b')?.podCount).toBe(0);
  });
});
