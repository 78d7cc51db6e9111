/**
 * How an informer opens a watch: the shape of client-node's `Watch.prototype.watch`, which the informer
 * was written against. The gateway's is httpsWatchFn (watch-https.ts); tests inject their own.
 */
export type WatchFn = (
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  /** `event` is the whole line, `{ type, object }`. */
  onEvent: (type: string, obj: unknown, event?: unknown) => void,
  onDone: (err: unknown) => void,
) => Promise<{ abort(): void }>;
