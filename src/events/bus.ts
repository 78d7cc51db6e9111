/**
 * A small synchronous, typed publish/subscribe bus. It knows nothing about the domain (topics are a
 * type parameter), so any layer can own one without import cycles.
 *
 * A listener that throws (or returns a rejected promise) is reported and skipped: one broken view
 * must never stop the cache or the scheduler that emitted the event.
 */

/** May return a promise; its rejection is reported like a throw. */
export type Listener<P> = (payload: P) => unknown;

export type ListenerErrorHandler = (err: unknown, topic: string) => void;

/** `emit('synced')` for topics without payload (`undefined`), `emit('pod', change)` otherwise. */
type PayloadArgs<P> = [P] extends [undefined] ? [] : [payload: P];

export interface EventBusOptions {
  onListenerError?: ListenerErrorHandler;
}

function defaultOnListenerError(err: unknown, topic: string): void {
  console.error(`event listener for "${topic}" failed:`, err);
}

/** The subscribing half of a bus: what a reader is handed, so it cannot emit. */
export interface Subscribable<Topics extends Record<string, unknown>> {
  on<K extends keyof Topics>(topic: K, fn: Listener<Topics[K]>): () => void;
}

export class EventBus<Topics extends Record<string, unknown>> {
  private readonly listeners = new Map<keyof Topics, Listener<never>[]>();
  private readonly onListenerError: ListenerErrorHandler;

  constructor(options: EventBusOptions = {}) {
    this.onListenerError = options.onListenerError ?? defaultOnListenerError;
  }

  /** Subscribes; returns the function that unsubscribes (idempotent). */
  on<K extends keyof Topics>(topic: K, fn: Listener<Topics[K]>): () => void {
    const list = this.listeners.get(topic) ?? [];
    list.push(fn as Listener<never>);
    this.listeners.set(topic, list);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const current = this.listeners.get(topic);
      if (!current) return;
      const i = current.indexOf(fn as Listener<never>);
      if (i >= 0) current.splice(i, 1);
      if (current.length === 0) this.listeners.delete(topic);
    };
  }

  /** Calls every listener of the topic in subscription order, synchronously. */
  emit<K extends keyof Topics>(topic: K, ...args: PayloadArgs<Topics[K]>): void {
    const list = this.listeners.get(topic);
    if (!list) return;
    const payload = args[0] as Topics[K];
    // A snapshot, so listeners may (un)subscribe while we dispatch.
    for (const fn of [...list] as Listener<Topics[K]>[]) {
      try {
        const result = fn(payload);
        if (result && typeof (result as Promise<void>).then === 'function') {
          (result as Promise<void>).then(undefined, (err: unknown) => this.report(err, topic));
        }
      } catch (err) {
        this.report(err, topic);
      }
    }
  }

  listenerCount(topic: keyof Topics): number {
    return this.listeners.get(topic)?.length ?? 0;
  }

  private report(err: unknown, topic: keyof Topics): void {
    try {
      this.onListenerError(err, String(topic));
    } catch {
      // The reporter itself failed; there is nobody left to tell.
    }
  }
}
