/**
 * The SSE writer of subscriptions (GraphQL over SSE, "distinct connections" mode, as yoga's own: a `:`
 * comment first and every 12 s, `event: next` per result, `event: complete` at the end), as a Node
 * Readable that the server adapter pipes into the response, in place of yoga's web ReadableStream.
 *
 * Why: every decision goes to every subscriber, so the per-result cost of the writer is multiplied by
 * the subscribers. Yoga's writer enqueues two encoded chunks per result into a web stream that the adapter
 * reads back with a promise per chunk; in the fan-out bench's profile that machinery (ReadableStream,
 * promise helpers, TextEncoder) was a seventh of the gateway's busy time. Here a shared result's frame
 * is built once, as bytes (`frameOf`), and the same Buffer is pushed to every subscriber's stream.
 *
 * A stream that fails (its subscriber fell too far behind, say) ends with one last `next` carrying the
 * error (its own message for a GraphQLError, which the schema's code wrote; a generic one otherwise)
 * and `complete`, rather than a cut connection the client would retry blindly.
 */
import { Readable } from 'node:stream';
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { WriteCoalescer } from '../server/write-coalescer.js';
import type { ResultQueue } from './result-queue.js';
import { serialisedOf, takeDirectQueue } from './shared-subscriptions.js';

const PING_INTERVAL_MS = 12_000;
const PING = Buffer.from(':\n\n');
const COMPLETE = Buffer.from('event: complete\ndata:\n\n');
const FRAME = Symbol('nodeload.sseFrame');
/** Bytes a subscriber's stream may hold unsent before it fails as too slow (~20,000 decisions). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

type Framed = ExecutionResult & { [FRAME]?: Buffer };

const EVENT_STREAM_HEADERS = {
  'Content-Type': 'text/event-stream',
  Connection: 'keep-alive',
  'Cache-Control': 'no-cache',
  'Content-Encoding': 'none',
} as const;

function frame(json: string): Buffer {
  return Buffer.from(`event: next\ndata: ${json}\n\n`);
}

/** A result's `next` frame; a shared result's is built once and cached on it. */
export function frameOf(result: ExecutionResult): Buffer {
  const cached = (result as Framed)[FRAME];
  if (cached) return cached;
  const shared = result.errors ? undefined : serialisedOf(result);
  if (shared === undefined) return frame(JSON.stringify(withoutInternals(result)));
  const built = frame(shared);
  Object.defineProperty(result, FRAME, { value: built, enumerable: false });
  return built;
}

/** A run of results gathered in one window, keyed by its first: `last` and `count` tell runs apart. */
const RUNS = new WeakMap<ExecutionResult, { last: ExecutionResult; count: number; bytes: Buffer }>();

/**
 * The frames of a window's results as one chunk. Every subscriber of a shared subscription that was
 * there all window gathered the same run (the hub hands each result to all of them in turn), so the
 * chunk is built once per window, not once per subscriber.
 */
export function framesOf(results: readonly ExecutionResult[]): Buffer {
  const first = results[0];
  if (!first) return Buffer.alloc(0);
  if (results.length === 1) return frameOf(first);
  const last = results[results.length - 1] as ExecutionResult;
  const run = RUNS.get(first);
  if (run && run.last === last && run.count === results.length) return run.bytes;
  const bytes = Buffer.concat(results.map(frameOf));
  if (!first.errors) RUNS.set(first, { last, count: results.length, bytes });
  return bytes;
}

/** Yoga's internal error extensions (`http`, `unexpected`) never reach a client. */
function withoutInternals(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.length && !result.extensions?.['http']) return result;
  const out: ExecutionResult = { ...result };
  if (result.errors)
    out.errors = result.errors.map((err) => {
      const json = (typeof err.toJSON === 'function' ? err.toJSON() : err) as ReturnType<
        GraphQLError['toJSON']
      >;
      if (!json.extensions) return json as never;
      const { http: _http, unexpected: _unexpected, ...extensions } = json.extensions;
      return { ...json, extensions: Object.keys(extensions).length ? extensions : undefined } as never;
    });
  if (result.extensions) {
    const { http: _http, ...extensions } = result.extensions;
    out.extensions = Object.keys(extensions).length ? extensions : undefined;
  }
  return out;
}

/** What a failed stream's last result says. */
function failureResult(err: unknown): ExecutionResult {
  const graphql = err instanceof Error && err.name === 'GraphQLError';
  const message = graphql ? err.message : 'Unexpected error.';
  const code = (graphql && (err as GraphQLError).extensions?.['code']) || 'INTERNAL_SERVER_ERROR';
  return { errors: [{ message, extensions: { code } } as never] };
}

/**
 * The response body of one subscription: pulls results while the response takes them, and with `direct`
 * (its shared subscription's queue) takes the error-free ones as they are published, without the pull.
 * With `window` those are gathered and pushed as one chunk when the write window ends (framesOf).
 */
export function eventStreamBody(
  results: AsyncIterable<ExecutionResult>,
  direct?: ResultQueue,
  window?: Pick<WriteCoalescer, 'later'>,
): Readable {
  const iterator = results[Symbol.asyncIterator]();
  let pulling = false;
  let finished = false;
  let ping: NodeJS.Timeout | undefined;
  let gathered: ExecutionResult[] = [];
  const finish = () => {
    finished = true;
    gathered = [];
    if (ping) clearInterval(ping);
  };
  /** Pushes what the window gathered; anything else pushed goes after it, so the order holds. */
  const pushGathered = () => {
    if (gathered.length === 0) return;
    const run = gathered;
    gathered = [];
    if (!finished) body.push(framesOf(run));
  };
  const body = new Readable({
    read() {
      if (!pulling && !finished) void pull();
    },
    destroy(err, callback) {
      const open = !finished;
      finish();
      // The client left (the adapter destroys the body when the response closes): end the subscription.
      if (open) void Promise.resolve(iterator.return?.()).catch(() => {});
      callback(err);
    },
  });
  const pull = async () => {
    pulling = true;
    try {
      for (;;) {
        const next = await iterator.next();
        if (finished) return;
        if (next.done) break;
        pushGathered();
        if (!body.push(frameOf(next.value))) return; // read() resumes once the response drained
      }
    } catch (err) {
      if (finished) return;
      pushGathered();
      body.push(frameOf(failureResult(err)));
    } finally {
      pulling = false;
    }
    pushGathered();
    finish();
    body.push(COMPLETE);
    body.push(null);
  };
  body.push(PING); // some browsers show nothing of a response until its first bytes
  direct?.attach((result) => {
    if (finished) return true;
    if (window) {
      gathered.push(result);
      if (gathered.length === 1) window.later(pushGathered);
    } else body.push(frameOf(result));
    return body.readableLength <= MAX_BUFFERED_BYTES;
  });
  ping = setInterval(() => {
    if (!finished && body.readableLength === 0) body.push(PING);
  }, PING_INTERVAL_MS);
  ping.unref();
  return body;
}

function acceptsEventStream(accept: string | null): boolean {
  return !!accept?.includes('text/event-stream') && !accept.includes('multipart/mixed');
}

/**
 * The envelop plugin: subscriptions asked for as text/event-stream get eventStreamBody, their shared
 * results gathered per `window` when one is given.
 */
export function useEventStreamWriter(window?: Pick<WriteCoalescer, 'later'>): Plugin {
  return {
    onResultProcess({ request, result, setResultProcessor }) {
      if (!(typeof result === 'object' && result !== null && Symbol.asyncIterator in result)) return;
      if (!acceptsEventStream(request.headers.get('accept'))) return;
      setResultProcessor((stream, fetchAPI) => {
        const body = eventStreamBody(
          stream as AsyncIterable<ExecutionResult>,
          takeDirectQueue(request),
          window,
        );
        // Over HTTP the adapter destroys the body when the response closes; a caller of yoga.fetch (the
        // tests, in-process) cancels through the request's signal instead.
        const signal = request.signal;
        if (signal?.aborted) body.destroy();
        else signal?.addEventListener('abort', () => body.destroy(), { once: true });
        return new fetchAPI.Response(body as never, { status: 200, headers: EVENT_STREAM_HEADERS });
      }, 'text/event-stream');
    },
  };
}
