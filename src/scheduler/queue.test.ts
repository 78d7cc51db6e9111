import { describe, expect, it } from 'vitest';
import { backoffDuration, SchedulingQueue } from './queue.js';
import { NOW, pod } from './testing.js';

function setup(opts: { unschedulableRetryMs?: number } = {}) {
  let now = NOW;
  const queue = new SchedulingQueue({ now: () => now, ...opts });
  return {
    queue,
    advance(ms: number) {
      now += ms;
    },
    popAll(): string[] {
      const out: string[] = [];
      for (let e = queue.pop(); e; e = queue.pop()) out.push(e.pod.name);
      return out;
    },
  };
}

describe('backoffDuration', () => {
  it.each([
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [4, 8000],
    [5, 10_000],
    [50, 10_000],
  ])('attempt %i → %i ms', (attempts, ms) => {
    expect(backoffDuration(attempts, 1000, 10_000)).toBe(ms);
  });
});

describe('SchedulingQueue', () => {
  it('pops by priority, then arrival', () => {
    const { queue, advance, popAll } = setup();
    queue.add(pod('low-1', { priority: 0 }));
    advance(1);
    queue.add(pod('high', { priority: 100 }));
    advance(1);
    queue.add(pod('low-2', { priority: 0 }));
    queue.add(pod('low-3', { priority: 0 }));
    expect(popAll()).toEqual(['high', 'low-1', 'low-2', 'low-3']);
  });

  it('does not add a pod twice; an update refreshes the stored pod', () => {
    const { queue, popAll } = setup();
    queue.add(pod('p', { cpu: '1' }));
    queue.add(pod('p', { cpu: '2' }));
    expect(queue.lengths().active).toBe(1);
    expect(queue.get('default/p')?.pod.requests.cpuMilli).toBe(2000);
    expect(popAll()).toEqual(['p']);
  });

  it('backs failed pods off 1 s, doubling to 10 s', () => {
    const { queue, advance } = setup();
    queue.add(pod('p'));
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const e = queue.pop();
      expect(e?.pod.name).toBe('p');
      queue.requeueAfterError('default/p', 'bind failed');
      expect(queue.lengths()).toMatchObject({ active: 0, backoff: 1 });
      let waited = 0;
      while (!queue.lengths().active) {
        advance(500);
        waited += 500;
        queue.flush();
      }
      waits.push(waited);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
  });

  it('parks unschedulable pods until something relevant changes', () => {
    const { queue, advance } = setup();
    queue.add(pod('p'));
    queue.pop();
    queue.requeueUnschedulable('default/p', '0/1 nodes are available: 1 Insufficient cpu.');
    expect(queue.lengths()).toMatchObject({ unschedulable: 1, active: 0, backoff: 0, inFlight: 0 });
    advance(5000);
    queue.flush();
    expect(queue.lengths().unschedulable).toBe(1);
    queue.moveAllToActiveOrBackoff();
    expect(queue.lengths()).toMatchObject({ unschedulable: 0, active: 1 });
  });

  it('a move while the pod is still backing off sends it to backoff, not active', () => {
    const { queue, advance } = setup();
    queue.add(pod('p'));
    queue.pop();
    queue.requeueUnschedulable('default/p', 'no');
    advance(200);
    queue.moveAllToActiveOrBackoff();
    expect(queue.lengths()).toMatchObject({ backoff: 1, active: 0 });
    advance(800);
    queue.flush();
    expect(queue.lengths()).toMatchObject({ backoff: 0, active: 1 });
  });

  it('retries unschedulable pods at least every 30 s without any event', () => {
    const { queue, advance } = setup();
    queue.add(pod('p'));
    queue.pop();
    queue.requeueUnschedulable('default/p', 'no');
    advance(29_999);
    queue.flush();
    expect(queue.lengths().unschedulable).toBe(1);
    expect(queue.nextFlushAt()).toBe(NOW + 30_000);
    advance(1);
    queue.flush();
    expect(queue.lengths()).toMatchObject({ unschedulable: 0, active: 1 });
  });

  it('a change during the attempt is not lost: the pod goes to backoff instead of unschedulable', () => {
    const { queue } = setup();
    queue.add(pod('p'));
    queue.pop();
    queue.moveAllToActiveOrBackoff(); // e.g. a node was added while we were filtering
    queue.requeueUnschedulable('default/p', 'no');
    expect(queue.lengths()).toMatchObject({ unschedulable: 0, backoff: 1 });
  });

  it('a change before the pop does not count for that attempt', () => {
    const { queue } = setup();
    queue.add(pod('p'));
    queue.moveAllToActiveOrBackoff();
    queue.pop();
    queue.requeueUnschedulable('default/p', 'no');
    expect(queue.lengths()).toMatchObject({ unschedulable: 1, backoff: 0 });
  });

  it('an update of an unschedulable pod retries it', () => {
    const { queue, advance } = setup();
    queue.add(pod('p', { cpu: '8' }));
    queue.pop();
    queue.requeueUnschedulable('default/p', 'Insufficient cpu');
    advance(2000);
    queue.add(pod('p', { cpu: '1' }));
    expect(queue.lengths()).toMatchObject({ unschedulable: 0, active: 1 });
    expect(queue.pop()?.pod.requests.cpuMilli).toBe(1000);
  });

  it('an update of an in-flight pod does not queue it again', () => {
    const { queue } = setup();
    queue.add(pod('p'));
    queue.pop();
    queue.add(pod('p', { cpu: '1' }));
    expect(queue.lengths()).toMatchObject({ active: 0, inFlight: 1 });
    expect(queue.pop()).toBeUndefined();
  });

  it('delete and done forget the pod wherever it is', () => {
    const { queue } = setup();
    queue.add(pod('a'));
    queue.add(pod('b'));
    queue.add(pod('c'));
    queue.pop(); // a in flight
    queue.delete('default/b');
    queue.done('default/a');
    expect(queue.lengths()).toEqual({ active: 1, backoff: 0, unschedulable: 0, inFlight: 0 });
    expect(queue.pop()?.pod.name).toBe('c');
    // Outcomes for forgotten pods are ignored.
    queue.requeueAfterError('default/a', 'late');
    expect(queue.has('default/a')).toBe(false);
  });

  it('lists pending pods with attempts and the last failure', () => {
    const { queue } = setup();
    queue.add(pod('p'));
    queue.pop();
    queue.requeueUnschedulable('default/p', '0/3 nodes are available: 3 Too many pods.');
    queue.add(pod('q', { namespace: 'other' }));
    expect(queue.pending()).toEqual([
      {
        pod: 'p',
        namespace: 'default',
        queue: 'unschedulable',
        reason: '0/3 nodes are available: 3 Too many pods.',
        since: new Date(NOW).toISOString(),
        attempts: 1,
      },
      {
        pod: 'q',
        namespace: 'other',
        queue: 'active',
        reason: '',
        since: new Date(NOW).toISOString(),
        attempts: 0,
      },
    ]);
  });

  it('stays consistent over many moves (lazy deletion compaction)', () => {
    const { queue, advance } = setup();
    for (let i = 0; i < 50; i++) queue.add(pod(`p${i}`));
    for (let round = 0; round < 20; round++) {
      for (let e = queue.pop(); e; e = queue.pop()) queue.requeueUnschedulable(e.key, 'no');
      advance(20_000);
      queue.moveAllToActiveOrBackoff();
      queue.flush();
    }
    expect(queue.lengths()).toEqual({ active: 50, backoff: 0, unschedulable: 0, inFlight: 0 });
    const names = new Set<string>();
    for (let e = queue.pop(); e; e = queue.pop()) names.add(e.pod.name);
    expect(names.size).toBe(50);
  });

  it('clear drops everything', () => {
    const { queue } = setup();
    queue.add(pod('a'));
    queue.add(pod('b'));
    queue.pop();
    queue.clear();
    expect(queue.lengths()).toEqual({ active: 0, backoff: 0, unschedulable: 0, inFlight: 0 });
    expect(queue.pop()).toBeUndefined();
  });
});
