import { ApiException, type EventsV1Event } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../server/log.js';
import type { NotSteered } from './admit.js';
import { NOT_STEERED_ANNOTATION } from './gate.js';
import {
  NotSteeredEvents,
  type NotSteeredEventsOptions,
  notSteeredEvent,
  type PodView,
} from './not-steered.js';

const REASONS = ['DynamicResources: pod uses ResourceClaim "gpu"'];

function view(name: string, uid: string, annotated = true, namespace = 'team'): PodView {
  return {
    namespace,
    name,
    uid,
    schedulerName: 'default-scheduler',
    annotations: annotated ? { [NOT_STEERED_ANNOTATION]: REASONS.join('; ') } : {},
  };
}

function expected(name: string, generateName = '', namespace = 'team'): NotSteered {
  return { namespace, name, generateName, reasons: REASONS };
}

function harness(over: Partial<NotSteeredEventsOptions> = {}) {
  const cached = new Map<string, PodView>();
  const events: EventsV1Event[] = [];
  let listener: ((pod: PodView) => void) | undefined;
  let now = 1_000_000;
  const recorder = new NotSteeredEvents({
    watchPods: (fn) => {
      listener = fn;
      return () => {
        listener = undefined;
      };
    },
    lookupPod: (ns, name) => cached.get(`${ns}/${name}`),
    createEvent: async (e) => {
      events.push(e);
    },
    schedulerName: 'nodeload-scheduler',
    instance: 'nodeload-webhook-test',
    log: createLogger('silent'),
    now: () => now,
    ...over,
  });
  recorder.start();
  /** What the informer does: the cache gets the pod, then the bus tells the listeners. */
  const informer = (pod: PodView) => {
    cached.set(`${pod.namespace}/${pod.name}`, pod);
    listener?.(pod);
  };
  return {
    recorder,
    events,
    informer,
    cached,
    advance: (ms: number) => {
      now += ms;
    },
    subscribed: () => listener !== undefined,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('NotSteeredEvents', () => {
  it('writes one NotSteered Event on the pod once the informer shows it, by name and UID', async () => {
    const h = harness();
    h.recorder.expect(expected('web-1'));
    expect(h.events).toEqual([]);
    h.informer(view('web-1', 'uid-1'));
    await h.recorder.whenIdle();
    expect(h.events).toHaveLength(1);
    expect(h.events[0]).toMatchObject({
      metadata: { name: 'web-1.uid-1', namespace: 'team' },
      reportingController: 'nodeload-webhook',
      reportingInstance: 'nodeload-webhook-test',
      action: 'Admit',
      reason: 'NotSteered',
      type: 'Normal',
      regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'team', name: 'web-1', uid: 'uid-1' },
    });
    expect(h.events[0]?.note).toBe(
      'not steered to nodeload-scheduler, which does not handle this yet: DynamicResources: pod uses ResourceClaim "gpu"; scheduler "default-scheduler" kept',
    );
    expect(h.recorder.pending).toBe(0);
  });

  it('matches a generateName pod by its prefix, one expectation per pod', async () => {
    const h = harness();
    h.recorder.expect(expected('', 'web-'));
    h.recorder.expect(expected('', 'web-'));
    h.informer(view('db-abcde', 'uid-db'));
    h.informer(view('web-abcde', 'uid-a'));
    h.informer(view('web-fghij', 'uid-b'));
    h.informer(view('web-klmno', 'uid-c'));
    await h.recorder.whenIdle();
    expect(h.events.map((e) => e.regarding?.name)).toEqual(['web-abcde', 'web-fghij']);
  });

  it.each([
    { what: 'a pod without the annotation', pod: view('web-1', 'uid-1', false) },
    { what: 'a pod in another namespace', pod: view('web-1', 'uid-1', true, 'other') },
    { what: 'a pod of another name', pod: view('web-2', 'uid-2') },
  ])('ignores $what', async ({ pod }) => {
    const h = harness();
    h.recorder.expect(expected('web-1'));
    h.informer(pod);
    await h.recorder.whenIdle();
    expect(h.events).toEqual([]);
    expect(h.recorder.pending).toBe(1);
  });

  it('a pod that already had the name when the request came is not the one being created', async () => {
    const h = harness();
    h.informer(view('web-1', 'old-uid'));
    h.recorder.expect(expected('web-1'));
    h.informer({ ...view('web-1', 'old-uid'), schedulerName: 'x' }); // an update of the old pod
    await h.recorder.whenIdle();
    expect(h.events).toEqual([]);
    h.informer(view('web-1', 'new-uid')); // old one deleted, the new one created
    await h.recorder.whenIdle();
    expect(h.events.map((e) => e.regarding?.uid)).toEqual(['new-uid']);
  });

  it('deduplicates: updates of the pod and a reinvoked admission give one Event', async () => {
    const h = harness();
    h.recorder.expect(expected('web-1'));
    h.recorder.expect(expected('web-1')); // reinvocation
    expect(h.recorder.pending).toBe(1);
    h.informer(view('web-1', 'uid-1'));
    h.informer(view('web-1', 'uid-1'));
    h.recorder.expect(expected('web-1')); // a late reinvocation after the Event
    h.informer(view('web-1', 'uid-1'));
    await h.recorder.whenIdle();
    expect(h.events).toHaveLength(1);
  });

  it('expectations expire: a pod refused after our admission never appears', async () => {
    const h = harness({ ttlMs: 1000 });
    h.recorder.expect(expected('web-1'));
    h.recorder.expect(expected('', 'job-'));
    h.advance(1001);
    h.informer(view('web-1', 'uid-1'));
    h.informer(view('job-x', 'uid-2'));
    await h.recorder.whenIdle();
    expect(h.events).toEqual([]);
    expect(h.recorder.pending).toBe(0);
  });

  it('is bounded: beyond maxExpected, expectations are dropped and counted', () => {
    const h = harness({ maxExpected: 3 });
    for (let i = 0; i < 5; i++) h.recorder.expect(expected(`p-${i}`));
    expect(h.recorder.pending).toBe(3);
    expect(h.recorder.dropped).toBe(2);
  });

  it('writes are best effort: 409 is a duplicate from another replica, other errors are counted', async () => {
    let calls = 0;
    const h = harness({
      createEvent: async () => {
        calls++;
        throw calls === 1
          ? new ApiException(409, 'AlreadyExists', '{}', {})
          : new Error('connection refused');
      },
    });
    h.recorder.expect(expected('a'));
    h.recorder.expect(expected('b'));
    expect(() => h.informer(view('a', 'uid-a'))).not.toThrow();
    h.informer(view('b', 'uid-b'));
    await h.recorder.whenIdle();
    expect(calls).toBe(2);
    expect(h.recorder.failed).toBe(1);
    expect(h.recorder.written).toBe(0);
  });

  it('is rate-limited', async () => {
    vi.useFakeTimers();
    const h = harness({ qps: 1, burst: 1, concurrency: 10, now: () => Date.now() });
    for (const n of ['a', 'b', 'c']) h.recorder.expect(expected(n));
    for (const n of ['a', 'b', 'c']) h.informer(view(n, `uid-${n}`));
    await vi.advanceTimersByTimeAsync(0);
    expect(h.events).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.events).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.events).toHaveLength(3);
  });

  it('stop unsubscribes and forgets what it expected', () => {
    const h = harness();
    h.recorder.expect(expected('web-1'));
    h.recorder.stop();
    expect(h.subscribed()).toBe(false);
    expect(h.recorder.pending).toBe(0);
  });
});

describe('notSteeredEvent', () => {
  it('keeps the name a valid DNS subdomain and the note within the API limit', () => {
    const long = `${'a'.repeat(199)}-${'b'.repeat(53)}`;
    const e = notSteeredEvent(
      view(long, '0f6c2a4e-1b2c-4d5e-8f90-123456789abc'),
      ['x'.repeat(2000)],
      's',
      'i',
    );
    const name = e.metadata?.name ?? '';
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
    expect(e.note?.length).toBeLessThanOrEqual(1024);
    expect(e.regarding?.name).toBe(long);
  });
});
