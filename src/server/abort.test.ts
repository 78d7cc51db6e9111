import { describe, expect, it } from 'vitest';
import { abortableSleep, untilAborted } from './abort.js';

describe('untilAborted', () => {
  it("passes the work's outcome through while the signal stays quiet", async () => {
    const signal = new AbortController().signal;
    await expect(untilAborted(Promise.resolve(3), signal)).resolves.toBe(3);
    await expect(untilAborted(Promise.reject(new Error('no')), signal)).rejects.toThrow('no');
    await expect(untilAborted(Promise.resolve(4), undefined)).resolves.toBe(4);
  });

  it("rejects with the signal's reason when it aborts first, and at once when it already has", async () => {
    const controller = new AbortController();
    const never = new Promise<never>(() => undefined);
    const waiting = untilAborted(never, controller.signal);
    controller.abort(new Error('SIGTERM'));
    await expect(waiting).rejects.toThrow('SIGTERM');
    await expect(untilAborted(never, controller.signal)).rejects.toThrow('SIGTERM');
  });
});

describe('abortableSleep', () => {
  it('ends early on abort', async () => {
    const controller = new AbortController();
    const sleeping = abortableSleep(3_600_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
  });

  it('resolves after the time without a signal', async () => {
    await expect(abortableSleep(1, undefined)).resolves.toBeUndefined();
  });
});
