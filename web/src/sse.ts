/**
 * An incremental Server-Sent Events parser (the subset GraphQL over SSE uses: `event`, `data`,
 * comments). Fed arbitrary text chunks as they arrive from a fetch body; emits one message per
 * blank-line-terminated block, as the EventSource spec does.
 */

export interface SseMessage {
  /** "message" when the block had no `event:` line. */
  event: string;
  data: string;
}

export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];

  /** A chunk ended in \r: if the next one starts with \n, that \n belongs to the same line end. */
  private skipLeadingLf = false;

  /** Parses a chunk; returns the messages it completed. */
  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (this.skipLeadingLf && text.startsWith('\n')) text = text.slice(1);
    this.skipLeadingLf = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    for (;;) {
      const nl = this.buffer.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      const crlf = this.buffer.startsWith('\r\n', nl);
      if (!crlf && this.buffer[nl] === '\r' && nl === this.buffer.length - 1) this.skipLeadingLf = true;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + (crlf ? 2 : 1));
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') {
      if (this.data.length === 0 && this.event === '') return undefined;
      const message = { event: this.event || 'message', data: this.data.join('\n') };
      this.event = '';
      this.data = [];
      return message;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    return undefined;
  }
}
