import type { ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ResultQueue } from './result-queue.js';

const r = (n: number): ExecutionResult => ({ data: { n } });

/** Reads until done or an error: the values' n, then 'done' or the error's message. */
async function drain(q: ResultQueue): Promise<(number | string)[]> {
  const out: (number | string)[] = [];
  try {
    for (;;) {
      const next = await q.next();
      if (next.done) return [...out, 'done'];
      out.push((next.value.data as { n: number }).n);
    }
  } catch (err) {
    return [...out, (err as Error).message];
  }
}

describe('ResultQueue', () => {
  it.each<[string, (q: ResultQueue) => void, (number | string)[]]>([
    ['ended: what was queued, then done', (q) => [q.push(r(1)), q.push(r(2)), q.end()], [1, 2, 'done']],
    [
      'failed: what was queued, then the error, then done',
      (q) => [q.push(r(1)), q.fail(new Error('boom'))],
      [1, 'boom'],
    ],
    [
      'over capacity: fails itself, the reader gets the queued results then the error',
      (q) => [q.push(r(1)), q.push(r(2)), q.push(r(3)), q.push(r(4))],
      [1, 2, 3, 'subscriber fell too far behind the shared subscription: resubscribe and refetch'],
    ],
    ['pushes after the end are refused', (q) => [q.end(), q.push(r(1))], ['done']],
  ])('%s', async (_name, act, expected) => {
    const q = new ResultQueue(3, () => {});
    act(q);
    expect(await drain(q)).toEqual(expected);
    expect(await q.next()).toEqual({ value: undefined, done: true });
  });

  it('says whether a push was taken', () => {
    const q = new ResultQueue(1, () => {});
    expect([q.push(r(1)), q.push(r(2)), q.push(r(3))]).toEqual([true, false, false]);
  });

  it('hands a push straight to a waiting reader, past a full queue', async () => {
    const q = new ResultQueue(0, () => {});
    const waiting = q.next();
    expect(q.push(r(1))).toBe(true);
    expect(await waiting).toEqual({ value: r(1), done: false });
    expect(q.push(r(2))).toBe(false); // capacity 0, nobody waiting
  });

  it('settles a waiting reader when it ends or fails', async () => {
    const ended = new ResultQueue(3, () => {});
    const a = ended.next();
    ended.end();
    expect(await a).toEqual({ value: undefined, done: true });
    const failed = new ResultQueue(3, () => {});
    const b = failed.next();
    failed.fail(new Error('gone'));
    await expect(b).rejects.toThrow('gone');
  });

  it('tells its owner once when the reader leaves, and drops what was queued', async () => {
    let left = 0;
    const q = new ResultQueue(10, () => left++);
    q.push(r(1));
    const pending = new ResultQueue(10, () => left++);
    const waiting = pending.next();
    await q.return();
    await q.return();
    await pending.throw();
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(left).toBe(2);
    expect(await q.next()).toEqual({ value: undefined, done: true });
    expect(q.push(r(2))).toBe(false);
  });

  it('keeps order across compactions', async () => {
    const q = new ResultQueue(5000, () => {});
    const seen: number[] = [];
    for (let n = 0; n < 3000; n++) {
      q.push(r(n));
      if (n % 3 === 0) seen.push(((await q.next()).value as { data: { n: number } }).data.n);
    }
    q.end();
    for (const v of await drain(q)) if (typeof v === 'number') seen.push(v);
    expect(seen).toEqual(Array.from({ length: 3000 }, (_, n) => n));
  });
});

describe('ResultQueue.attach', () => {
  const withErrors = (n: number): ExecutionResult => ({
    data: { n },
    errors: [new Error('masked later') as never],
  });

  it('hands what was queued, then each push, to the sink; next() then only reports the end', async () => {
    const q = new ResultQueue(10, () => {});
    const sunk: number[] = [];
    q.push(r(1));
    q.attach((v) => sunk.push((v.data as { n: number }).n) > 0);
    q.push(r(2));
    q.push(r(3));
    const end = q.next();
    q.end();
    expect(await end).toEqual({ value: undefined, done: true });
    expect(sunk).toEqual([1, 2, 3]);
  });

  it('gives a result with errors, and all after it, back to next(), in order', async () => {
    const q = new ResultQueue(10, () => {});
    const sunk: number[] = [];
    q.attach((v) => sunk.push((v.data as { n: number }).n) > 0);
    q.push(r(1));
    q.push(withErrors(2));
    q.push(r(3));
    q.end();
    expect(sunk).toEqual([1]);
    expect(await drain(q)).toEqual([2, 3, 'done']);
  });

  it('does not attach past a queued result with errors', async () => {
    const q = new ResultQueue(10, () => {});
    const sunk: number[] = [];
    q.push(r(1));
    q.push(withErrors(2));
    q.attach((v) => sunk.push((v.data as { n: number }).n) > 0);
    q.push(r(3));
    q.end();
    expect(sunk).toEqual([1]);
    expect(await drain(q)).toEqual([2, 3, 'done']);
  });

  it('fails when the sink says its subscriber is too far behind', async () => {
    const q = new ResultQueue(10, () => {});
    q.attach(() => false);
    expect(q.push(r(1))).toBe(false);
    expect(await drain(q)).toEqual([
      'subscriber fell too far behind the shared subscription: resubscribe and refetch',
    ]);
  });
});
