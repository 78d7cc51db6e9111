import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { classifyBindError, conditionUpToDate, unschedulablePatch, writeFailureLevel } from './binder.js';
import { disruptionTargetPatch } from './preemption-writes.js';
import { pod } from './testing.js';

const apiError = (code: number, message: string) =>
  new ApiException(code, 'error', JSON.stringify({ kind: 'Status', message }), {});

describe('classifyBindError', () => {
  it.each([
    [apiError(409, 'pod web-1 is already assigned to node "n1"'), 'already-bound'],
    [apiError(404, 'pods "web-1" not found'), 'pod-gone'],
    [
      apiError(409, 'Operation cannot be fulfilled on pods/binding "web-1": pod web-1 is being deleted'),
      'failed',
    ],
    [apiError(500, 'etcdserver: request timed out'), 'failed'],
    [new Error('socket hang up'), 'failed'],
  ])('%s → %s', (err, kind) => {
    expect(classifyBindError(err).kind).toBe(kind);
  });

  it('keeps the API server message', () => {
    expect(classifyBindError(apiError(500, 'etcdserver: request timed out'))).toEqual({
      kind: 'failed',
      message: 'etcdserver: request timed out',
      status: 500,
    });
  });
});

describe('writeFailureLevel', () => {
  it.each([
    [
      apiError(
        403,
        'pods "web-1" is forbidden: User "system:serviceaccount:x:y" cannot patch resource "pods/status"',
      ),
      'warn',
    ],
    [apiError(401, 'Unauthorized'), 'warn'],
    [apiError(409, 'the object has been modified'), 'debug'],
    [apiError(404, 'pods "web-1" not found'), 'debug'],
    [new Error('socket hang up'), 'debug'],
  ])('%s → %s', (err, level) => {
    expect(writeFailureLevel(err)).toBe(level);
  });
});

describe('unschedulablePatch', () => {
  const now = new Date('2026-11-29T12:00:00.123Z');

  it('sets PodScheduled=False/Unschedulable guarded by the resourceVersion', () => {
    expect(unschedulablePatch(pod('p'), '0/1 nodes are available: 1 Too many pods.', now)).toEqual({
      metadata: { resourceVersion: '1' },
      status: {
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/1 nodes are available: 1 Too many pods.',
            lastProbeTime: null,
            lastTransitionTime: '2026-11-29T12:00:00Z',
          },
        ],
      },
    });
  });

  it('keeps lastTransitionTime when the status does not change', () => {
    const p = {
      ...pod('p'),
      scheduledCondition: { status: 'False', reason: 'Unschedulable', message: 'old' },
    };
    const patch = unschedulablePatch(p, 'new', now);
    expect(patch.status.conditions[0].lastTransitionTime).toBeUndefined();
    expect(conditionUpToDate(p, 'old')).toBe(true);
    expect(conditionUpToDate(p, 'new')).toBe(false);
  });

  it('names the pod generation it was written for, and is stale once the spec moved on', () => {
    const p = {
      ...pod('p'),
      generation: 3,
      scheduledCondition: { status: 'False', reason: 'Unschedulable', message: 'm', observedGeneration: 2 },
    };
    expect(unschedulablePatch(p, 'm', now).status.conditions[0].observedGeneration).toBe(3);
    expect(conditionUpToDate(p, 'm')).toBe(false);
    expect(
      conditionUpToDate(
        { ...p, scheduledCondition: { ...p.scheduledCondition, observedGeneration: 3 } },
        'm',
      ),
    ).toBe(true);
  });
});

describe('disruptionTargetPatch', () => {
  it("carries kube-scheduler's reason, message and the victim's generation", () => {
    const victim = { ...pod('low'), generation: 2 };
    const preemptor = { ...pod('high'), schedulerName: 'nodeload-scheduler' };
    expect(disruptionTargetPatch(victim, preemptor, new Date('2026-12-07T15:00:00.500Z'))).toEqual({
      status: {
        conditions: [
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'PreemptionByScheduler',
            message: 'nodeload-scheduler: preempting to accommodate a higher priority pod',
            lastTransitionTime: '2026-12-07T15:00:00Z',
            observedGeneration: 2,
          },
        ],
      },
    });
  });
});
