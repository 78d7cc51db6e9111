/**
 * The body of a Kubernetes watch response, decoded: one JSON object per line (`{"type":…,"object":…}`),
 * as the API server writes them, straight from the socket's Buffer chunks.
 *
 * Lines are split on the byte 0x0a, never on decoded text: that byte cannot occur inside a multi-byte
 * UTF-8 sequence, so a chunk boundary inside a character is harmless and each complete line is decoded
 * once. client-node's Watch instead pipes undici's web stream through Readable.fromWeb and readline,
 * which decodes every chunk into a string, concatenates and re-splits it before JSON.parse.
 *
 * A line that is not JSON is an error (thrown from write/end), not skipped as client-node does: a
 * skipped event is a change the cache never sees, while a failed watch is retried from the last
 * resourceVersion it did see.
 *
 * With `withoutManagedFields`, objects arrive without `metadata.managedFields`, which is then never
 * parsed (watch-lean.ts): for consumers that do not read it, about half the cost of decoding a pod.
 */
import { managedFieldsRange } from './watch-lean.js';

export interface WatchEvent {
  type: string;
  object: unknown;
}

export class WatchDecodeError extends Error {
  override readonly name = 'WatchDecodeError';
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
/** How much of a malformed line an error message quotes. */
const QUOTED_BYTES = 120;

export class WatchLineDecoder {
  /** The start of a line whose end has not arrived yet (several chunks when a line spans them). */
  private pending: Buffer[] = [];

  constructor(
    private readonly onEvent: (event: WatchEvent) => void,
    private readonly opts: { withoutManagedFields?: boolean } = {},
  ) {}

  /** Decodes every line the chunk completes; keeps the rest for the next chunk. */
  write(chunk: Buffer): void {
    let start = 0;
    let newline = chunk.indexOf(NEWLINE, start);
    if (newline !== -1 && this.pending.length > 0) {
      this.pending.push(chunk.subarray(0, newline));
      const line = Buffer.concat(this.pending);
      this.pending = [];
      this.decode(line, 0, line.length);
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    while (newline !== -1) {
      this.decode(chunk, start, newline);
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    // A view would keep the whole chunk (up to 64 KiB of socket read) alive until the line completes;
    // the remainder is at most one event, so copy it.
    if (start < chunk.length) this.pending.push(Buffer.from(chunk.subarray(start)));
  }

  /** The stream ended: a last line without its newline is decoded as readline would hand it over. */
  end(): void {
    if (this.pending.length === 0) return;
    const line = Buffer.concat(this.pending);
    this.pending = [];
    this.decode(line, 0, line.length);
  }

  private decode(buf: Buffer, start: number, end: number): void {
    if (end > start && buf[end - 1] === CARRIAGE_RETURN) end--;
    if (end === start) return;
    const event =
      (this.opts.withoutManagedFields && this.parseLean(buf, start, end)) || this.parse(buf, start, end);
    this.onEvent(event);
  }

  /** The line without its managedFields, or undefined when it has none or the rest does not parse. */
  private parseLean(buf: Buffer, start: number, end: number): WatchEvent | undefined {
    const cut = managedFieldsRange(buf, start, end);
    if (!cut) return undefined;
    try {
      const event = JSON.parse(buf.toString('utf8', start, cut[0]) + buf.toString('utf8', cut[1], end));
      return isEvent(event) ? event : undefined;
    } catch {
      // The whole line's parse says what is wrong with it.
      return undefined;
    }
  }

  private parse(buf: Buffer, start: number, end: number): WatchEvent {
    const text = buf.toString('utf8', start, end);
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch (err) {
      throw new WatchDecodeError(
        `watch stream: a line is not JSON (${(err as Error).message}): ${text.slice(0, QUOTED_BYTES)}`,
      );
    }
    if (!isEvent(event))
      throw new WatchDecodeError(`watch stream: a line is not a watch event: ${text.slice(0, QUOTED_BYTES)}`);
    return event;
  }
}

function isEvent(value: unknown): value is WatchEvent {
  return value !== null && typeof value === 'object' && typeof (value as WatchEvent).type === 'string';
}
