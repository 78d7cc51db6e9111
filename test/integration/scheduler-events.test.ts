// The scheduler's Events against the real API server: a pod that keeps failing for the same reason is one
// FailedScheduling Event whose series.count grows (client-go's events recorder does the same), a new
// message starts a new Event, and the pod's Scheduled Event ends the series. Driven through the binder's
// writer itself (KubeSchedulerApi), as the scheduler's loop does, so the count does not depend on how
// often another file's gateway retries the pod.
import { EventsV1Api, type EventsV1Event } from '@kubernetes/client-node';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeSchedulerApi, type KubeSchedulerApiOptions } from '../../src/scheduler/binder.js';
import type { Decision } from '../../src/scheduler/explain.js';
import { TokenBucket } from '../../src/scheduler/ratelimit.js';
import { kubeConfig, uniqueName, withNamespace } from './context.js';

const CONTROLLER = 'nodeload-scheduler-events-test';

function decision(namespace: string, pod: string, o: Partial<Decision>): Decision {
  return {
    id: uniqueName('d'),
    namespace,
    pod,
    podUid: '00000000-0000-0000-0000-000000000001',
    result: 'unschedulable',
    time: new Date().toISOString(),
    algorithmMs: 1,
    latencyMs: 1,
    e2eLatencyMs: 1,
    attempts: 1,
    message: '0/3 nodes are available: 3 Insufficient cpu.',
    rules: [],
    totalNodes: 3,
    feasibleNodes: 0,
    candidates: [],
    reportingInstance: `${CONTROLLER}-a`,
    ...o,
  };
}

/** The binder's writer as the scheduler builds it, reporting as `<CONTROLLER>-<instance>`. */
function schedulerApi(
  instance: string,
  more: Pick<KubeSchedulerApiOptions, 'writeConcurrency' | 'maxPendingEvents'> = {},
): KubeSchedulerApi {
  return new KubeSchedulerApi({
    kubeConfig: kubeConfig(),
    controller: CONTROLLER,
    instance: `${CONTROLLER}-${instance}`,
    writeBucket: new TokenBucket({ qps: 100, burst: 100 }),
    log: pino({ level: 'silent' }),
    ...more,
  });
}

async function podEvents(namespace: string, pod: string): Promise<EventsV1Event[]> {
  const list = await kubeConfig()
    .makeApiClient(EventsV1Api)
    .listNamespacedEvent({ namespace, fieldSelector: `regarding.name=${pod}` });
  return list.items.sort((a, b) => String(a.eventTime).localeCompare(String(b.eventTime)));
}

describe('scheduler Events as series', () => {
  it('repeats count on the first FailedScheduling; a new message and Scheduled start new Events', async () => {
    const ns = await withNamespace('it-sched-events');
    const api = schedulerApi('a');
    const pod = 'web-0';
    const failed = () => api.recordDecision(decision(ns, pod, {}));
    failed();
    await api.drain();
    failed();
    failed();
    await api.drain();
    let events = await podEvents(ns, pod);
    expect(events.map((e) => [e.reason, e.series?.count])).toEqual([['FailedScheduling', 3]]);
    expect(events[0]?.note).toBe('0/3 nodes are available: 3 Insufficient cpu.');
    expect(events[0]?.reportingController).toBe(CONTROLLER);

    api.recordDecision(decision(ns, pod, { message: '0/3 nodes are available: 3 Insufficient memory.' }));
    await api.drain();
    api.recordDecision(
      decision(ns, pod, {
        result: 'scheduled',
        node: 'n1',
        message: `Successfully assigned ${ns}/${pod} to n1`,
      }),
    );
    await api.drain();
    // After Scheduled, the first message again is a new Event, not a fourth occurrence of the first.
    failed();
    await api.drain();
    events = await podEvents(ns, pod);
    expect(events.map((e) => [e.reason, e.note?.slice(0, 40), e.series?.count])).toEqual([
      ['FailedScheduling', '0/3 nodes are available: 3 Insufficient ', 3],
      ['FailedScheduling', '0/3 nodes are available: 3 Insufficient ', undefined],
      ['Scheduled', `Successfully assigned ${ns}/${pod} to n1`.slice(0, 40), undefined],
      ['FailedScheduling', '0/3 nodes are available: 3 Insufficient ', undefined],
    ]);
    expect(events[1]?.note).toContain('memory');
    expect(events[3]?.note).toContain('cpu');
  });
});

describe('scheduler Events under a full queue', () => {
  it("a FailedScheduling takes the oldest queued Scheduled Event's place instead of being dropped", async () => {
    const ns = await withNamespace('it-sched-events-full');
    // One writer and room for 3 queued Events: the first Scheduled Event is in flight, the next three
    // fill the queue, the fifth is dropped, and the Warning displaces the oldest queued one (s-2).
    const api = schedulerApi('b', { writeConcurrency: 1, maxPendingEvents: 3 });
    for (let i = 1; i <= 5; i++) {
      const pod = `s-${i}`;
      api.recordDecision(
        decision(ns, pod, {
          result: 'scheduled',
          node: 'n1',
          message: `Successfully assigned ${ns}/${pod} to n1`,
        }),
      );
    }
    api.recordDecision(decision(ns, 'f-0', {}));
    await api.drain();
    const list = await kubeConfig().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns });
    const written = list.items.map((e) => `${e.regarding?.name} ${e.reason}`).sort();
    expect(written).toEqual(['f-0 FailedScheduling', 's-1 Scheduled', 's-3 Scheduled', 's-4 Scheduled']);
  });
});
