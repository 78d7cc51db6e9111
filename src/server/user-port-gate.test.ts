import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GateBusyError, UserPortGate, type UserPortGateOptions } from './user-port-gate.js';

/** Just what the gate and on-headers touch of a request and a response. */
class FakeRes extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  body = '';
  readonly headers: Record<string, string> = {};
  setHeader(k: string, v: string) {
    this.headers[k.toLowerCase()] = v;
  }
  getHeader(k: string) {
    return this.headers[k.toLowerCase()];
  }
  writeHead(status: number) {
    this.statusCode = status;
    this.headersSent = true;
    return this;
  }
  end(body = '') {
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.body = body;
    this.emit('close');
  }
}

interface Harness {
  gate: UserPortGate;
  /** setImmediate stand-in: the callbacks the gate deferred, run by `turn()`. */
  turn: () => void;
  clock: { now: number };
  /** Sends a request; `started` turns true when the gate lets it through. */
  send: () => { req: EventEmitter; res: FakeRes; started: () => boolean };
  registry: Registry;
}

function harness(opts: Partial<UserPortGateOptions> = {}): Harness {
  const deferred: (() => void)[] = [];
  const clock = { now: 0 };
  const registry = new Registry();
  const gate = new UserPortGate({
    concurrency: 1,
    maxQueued: 10,
    maxWaitMs: 1000,
    holdMs: 100,
    registry,
    now: () => clock.now,
    defer: (fn) => deferred.push(fn),
    after: (fn, ms) => {
      setTimeout(fn, ms);
    },
    loopShare: 1,
    ...opts,
  });
  const mw = gate.middleware();
  return {
    gate,
    clock,
    registry,
    turn: () => {
      for (const fn of deferred.splice(0)) fn();
    },
    send: () => {
      const req = new EventEmitter();
      const res = new FakeRes();
      let started = false;
      mw(
        req as unknown as IncomingMessage as Request,
        res as unknown as ServerResponse as Response,
        (() => {
          started = true;
        }) as NextFunction,
      );
      return { req, res, started: () => started };
    },
  };
}

const answer = (res: FakeRes) => res.end('{}');

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('UserPortGate', () => {
  it('admits `concurrency` requests at once; the next only on a later turn of the event loop', () => {
    const h = harness({ concurrency: 2 });
    const [a, b, c] = [h.send(), h.send(), h.send()];
    expect([a.started(), b.started(), c.started()]).toEqual([true, true, false]);
    expect(h.gate.waiting).toBe(1);
    answer(a.res);
    // Not in the same turn: the kube port's pending requests go first.
    expect(c.started()).toBe(false);
    h.turn();
    expect(c.started()).toBe(true);
    expect(h.gate.inFlight).toBe(2);
  });

  it('gives the slot back when headers are written (an SSE stream stays open without holding it)', async () => {
    const h = harness();
    const sse = h.send();
    const next = h.send();
    sse.res.writeHead(200); // the stream opened; nothing ended
    await new Promise(process.nextTick);
    h.turn();
    expect(next.started()).toBe(true);
  });

  it('gives the slot back after holdMs to a request waiting on I/O', () => {
    const h = harness({ holdMs: 50 });
    h.send();
    const next = h.send();
    vi.advanceTimersByTime(49);
    h.turn();
    expect(next.started()).toBe(false);
    vi.advanceTimersByTime(1);
    h.turn();
    expect(next.started()).toBe(true);
  });

  it('keeps FIFO order, and skips a client that hung up while queued', () => {
    const h = harness();
    const first = h.send();
    const gone = h.send();
    const third = h.send();
    gone.res.emit('close');
    answer(first.res);
    h.turn();
    expect(gone.started()).toBe(false);
    expect(third.started()).toBe(true);
  });

  it.each([
    {
      name: 'queue full',
      opts: { maxQueued: 1 },
      act: (h: Harness) => {
        h.send();
        h.send();
        return h.send();
      },
      reason: 'queue_full',
      message: /1 requests are already waiting/,
    },
    {
      name: 'waited too long',
      opts: { maxWaitMs: 1000 },
      act: (h: Harness) => {
        const first = h.send();
        const late = h.send();
        h.clock.now = 1001;
        answer(first.res);
        h.turn();
        return late;
      },
      reason: 'wait_timeout',
      message: /waited 1001 ms without a turn/,
    },
  ])('answers 503 with Retry-After when $name', async ({ opts, act, reason, message }) => {
    const h = harness(opts);
    const refused = act(h);
    expect(refused.started()).toBe(false);
    expect(refused.res.statusCode).toBe(503);
    expect(refused.res.headers['retry-after']).toBe('1');
    const body = JSON.parse(refused.res.body);
    expect(body).toMatchObject({
      error: 'ServiceUnavailable',
      message: expect.stringMatching(message),
      errors: [{ extensions: { code: 'SERVICE_UNAVAILABLE', reason } }],
    });
    const metrics = await h.registry.getSingleMetricAsString('nodeload_user_port_rejected_requests_total');
    expect(metrics).toContain(`reason="${reason}"} 1`);
  });

  it('acquire(): the same turns for work that is not an HTTP request (graphql-ws queries)', async () => {
    const h = harness({ maxQueued: 1 });
    const request = h.send();
    let second: (() => void) | undefined;
    const pending = h.gate.acquire().then((release) => {
      second = release;
    });
    await expect(h.gate.acquire()).rejects.toBeInstanceOf(GateBusyError);
    answer(request.res);
    await Promise.resolve();
    expect(second).toBeUndefined();
    h.turn();
    await pending;
    expect(h.gate.inFlight).toBe(1);
    second?.();
    second?.(); // once only
    expect(h.gate.inFlight).toBe(0);
  });

  it('rations turns while the kube side is busy: the next user-port request waits until the share is paid back', async () => {
    const h = harness({ loopShare: 0.25 });
    h.gate.share.contendedWhile(() => true); // e.g. the scheduler has pods to place
    const first = h.send();
    const second = h.send();
    h.clock.now = 70; // the first request held its turn for 70 ms: 20 ms over the 50 ms burst
    answer(first.res);
    h.turn();
    expect(second.started()).toBe(false);
    // 20 ms of debt at a quarter of the loop: 80 ms of the loop for the kube side first.
    h.clock.now = 149;
    vi.advanceTimersByTime(79);
    expect(second.started()).toBe(false);
    h.clock.now = 150;
    vi.advanceTimersByTime(1);
    expect(second.started()).toBe(true);
    expect(await h.registry.getSingleMetricAsString('nodeload_user_port_yielded_seconds_total')).toMatch(
      / 0\.08$/m,
    );
  });

  it('charges a turn with the writing of its answer, not only up to its headers', async () => {
    const h = harness({ loopShare: 0.25 });
    h.gate.share.contendedWhile(() => true);
    const first = h.send();
    const second = h.send();
    first.res.writeHead(200); // headers at 0 ms,
    h.clock.now = 70; // then the body, written in the same turn: 70 ms, 20 over the burst
    await new Promise(process.nextTick);
    h.turn();
    expect(second.started()).toBe(false);
    h.clock.now = 150;
    vi.advanceTimersByTime(80);
    expect(second.started()).toBe(true);
  });

  it('does not hold the user port back while nothing else wants the loop', () => {
    const h = harness({ loopShare: 0.25 });
    const first = h.send();
    const second = h.send();
    h.clock.now = 100;
    answer(first.res);
    h.turn();
    expect(second.started()).toBe(true);
  });

  it('a kube-port request makes the loop contended for the user port', () => {
    const h = harness({ loopShare: 0.25 });
    const first = h.send();
    h.clock.now = 100;
    answer(first.res);
    h.gate.kubeActivity()({} as Request, {} as Response, (() => {}) as NextFunction);
    const late = h.send(); // nothing in flight, nothing queued: still in debt
    h.turn();
    expect(late.started()).toBe(false);
    h.clock.now = 300;
    vi.advanceTimersByTime(200);
    expect(late.started()).toBe(true);
  });

  it('is off with concurrency 0', () => {
    const h = harness({ concurrency: 0 });
    const all = Array.from({ length: 5 }, () => h.send());
    expect(all.every((r) => r.started())).toBe(true);
    expect(h.gate.waiting).toBe(0);
  });

  it('counts what is in flight and queued for /metrics', async () => {
    const h = harness();
    const first = h.send();
    h.send();
    expect(await h.registry.getSingleMetricAsString('nodeload_user_port_inflight_requests')).toMatch(/ 1$/m);
    expect(await h.registry.getSingleMetricAsString('nodeload_user_port_queued_requests')).toMatch(/ 1$/m);
    answer(first.res);
    h.turn();
    expect(await h.registry.getSingleMetricAsString('nodeload_user_port_queued_requests')).toMatch(/ 0$/m);
  });
});
