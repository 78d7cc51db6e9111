/**
 * Waiting that a signal can cut short: the gateway's start (the CRD wait, the components' starts) stops
 * on SIGTERM instead of holding the process until it is killed.
 */

/**
 * `work`'s outcome, or the signal's reason as soon as it aborts (the work itself is left to finish or
 * fail unobserved: an API request in flight is not cancelled, its answer is ignored).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return untilAborted(
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
    signal,
  ).finally(() => clearTimeout(timer));
}
