import { describe, expect, it } from 'vitest';
import { deviceClassChangeMatters, loadDropped, nodeChangeMatters, ruleChangeMatters } from './requeue.js';
import { loadsFor, node, pod, rule } from './testing.js';

describe('nodeChangeMatters', () => {
  const base = node('n', { labels: { zone: 'a' } });
  it.each([
    ['added', undefined, base, true],
    ['deleted', base, undefined, false],
    ['heartbeat only (new resourceVersion)', base, { ...base, resourceVersion: '2' }, false],
    ['uncordoned', node('n', { unschedulable: true }), node('n'), true],
    ['became ready', node('n', { ready: false }), node('n'), true],
    ['taint removed', node('n', { taints: [{ key: 'x', effect: 'NoSchedule' }] }), node('n'), true],
    ['label added', base, node('n', { labels: { zone: 'a', disk: 'ssd' } }), true],
    ['allocatable grew', node('n', { cpu: '4' }), node('n', { cpu: '8' }), true],
    [
      'an extended resource appeared',
      base,
      { ...base, allocatableResources: { ...base.allocatableResources, 'example.com/gpu': 2 } },
      true,
    ],
    [
      'the kubelet declares a feature',
      base,
      { ...base, declaredFeatures: ['RestartAllContainersOnContainerExits'] },
      true,
    ],
  ])('%s → %s', (_what, old, next, want) => {
    expect(nodeChangeMatters(old, next)).toBe(want);
  });
});

describe('loadDropped', () => {
  const n = node('n');
  const idle = loadsFor([n]).get('n');
  const busy = loadsFor([n], [pod('b', { nodeName: 'n', cpu: '1' })]).get('n');
  it.each([
    ['first figure for a node', undefined, idle, false],
    ['node gone', busy, undefined, false],
    ['pod left', busy, idle, true],
    ['pod arrived', idle, busy, false],
    ['unchanged', busy, busy, false],
  ])('%s → %s', (_what, prev, next, want) => {
    expect(loadDropped(prev, next)).toBe(want);
  });

  it('counts metrics turning available again (fail-closed) as room', () => {
    const unavailable = { ...(busy as NonNullable<typeof busy>), unavailable: true };
    expect(loadDropped(unavailable, busy)).toBe(true);
  });
});

describe('ruleChangeMatters', () => {
  it('ignores status-only updates and reacts to spec changes, adds and deletes', () => {
    const r = rule('web', { maxCPU: 70 });
    expect(ruleChangeMatters(r, { ...r, resourceVersion: '9', status: undefined })).toBe(false);
    expect(ruleChangeMatters(r, rule('web', { maxCPU: 80 }))).toBe(true);
    expect(ruleChangeMatters(undefined, r)).toBe(true);
    expect(ruleChangeMatters(r, undefined)).toBe(true);
  });
});

describe('deviceClassChangeMatters', () => {
  const cls = (extendedResourceName?: string) => ({
    name: 'gpu',
    resourceVersion: '1',
    createdAt: 0,
    ...(extendedResourceName ? { extendedResourceName } : {}),
  });
  it.each([
    { name: 'added', c: { new: cls() }, matters: true },
    { name: 'deleted', c: { old: cls('example.com/gpu') }, matters: true },
    { name: 'its extended resource renamed', c: { old: cls('a/x'), new: cls('a/y') }, matters: true },
    { name: 'its extended resource set', c: { old: cls(), new: cls('a/x') }, matters: true },
    {
      name: 'anything else',
      c: { old: cls('a/x'), new: { ...cls('a/x'), resourceVersion: '2' } },
      matters: false,
    },
  ])('$name → $matters', ({ c, matters }) => {
    expect(deviceClassChangeMatters(c)).toBe(matters);
  });
});
