// The fan-out bench's client-side parsing (fanout-client.ts). 500 SSE streams × 5,000 decisions are 2.5M
// messages read by one process on the same 2 cores as the gateway: the client must cost little, or its
// own lag shows up as the gateway's latency. So no general SSE parser (web/src/sse.ts scans each line
// with a regular expression) and no JSON.parse: messages are split on the blank line yoga writes after
// each one, and the three fields the bench needs are found with indexOf.

/**
 * What every subscriber asks: the burst's namespace, a small selection. `latencyMs` is there so that the
 * moment of publication can be computed (the decision goes out when its bind returned, `time` is when its
 * cycle started).
 */
export const FANOUT_QUERY =
  'subscription($ns: String) { schedulingEvents(namespace: $ns) { pod node result time latencyMs } }';

/**
 * Splits a text/event-stream into the `data` of its `next` events, chunk by chunk. Handles what yoga
 * writes: `event: next\ndata: {…}\n\n`, keep-alive comments (`:\n\n`) and `event: complete`; a message
 * may be cut anywhere between two chunks. Multi-line data is joined with \n, as EventSource does.
 */
export class NextEventSplitter {
  private rest = '';

  push(chunk: string): string[] {
    const text = this.rest + chunk;
    const out: string[] = [];
    let from = 0;
    for (;;) {
      const end = text.indexOf('\n\n', from);
      if (end < 0) break;
      const data = nextData(text, from, end);
      if (data !== undefined) out.push(data);
      from = end + 2;
    }
    this.rest = from === 0 ? text : text.slice(from);
    return out;
  }
}

/** The data of the message text[from, end) when its event is `next`, else undefined. */
function nextData(text: string, from: number, end: number): string | undefined {
  let event = '';
  let data: string | undefined;
  let line = from;
  while (line < end) {
    let eol = text.indexOf('\n', line);
    if (eol < 0 || eol > end) eol = end;
    if (text.startsWith('event:', line)) event = text.slice(line + 6, eol).trim();
    else if (text.startsWith('data:', line)) {
      const start = text.charCodeAt(line + 5) === 32 ? line + 6 : line + 5;
      const value = text.slice(start, eol);
      data = data === undefined ? value : `${data}\n${value}`;
    }
    line = eol + 1;
  }
  return event === 'next' && data !== undefined ? data : undefined;
}

/** What the bench reads of one schedulingEvents payload. */
export interface DeliveredDecision {
  pod: string;
  result: string;
  /** The decision's `time` (its cycle start), epoch ms. */
  startMs: number;
  /** When the gateway published it: `time` + `latencyMs` (the whole attempt, bind included). */
  publishedMs: number;
}

/**
 * The fields of `{ pod node result time latencyMs }` from a payload's JSON without parsing all of it;
 * undefined when one is missing (an error payload). Pod names and results never contain quotes.
 */
export function decisionFields(json: string): DeliveredDecision | undefined {
  const pod = stringField(json, '"pod":"');
  const result = stringField(json, '"result":"');
  const time = stringField(json, '"time":"');
  const at = json.indexOf('"latencyMs":');
  if (pod === undefined || result === undefined || time === undefined || at < 0) return undefined;
  const latencyMs = Number.parseFloat(json.slice(at + 12, at + 40));
  const startMs = Date.parse(time);
  if (!Number.isFinite(latencyMs) || !Number.isFinite(startMs)) return undefined;
  return { pod, result, startMs, publishedMs: startMs + latencyMs };
}

function stringField(json: string, key: string): string | undefined {
  const at = json.indexOf(key);
  if (at < 0) return undefined;
  const start = at + key.length;
  const end = json.indexOf('"', start);
  return end < 0 ? undefined : json.slice(start, end);
}

/** The number of a bench pod named `${prefix}${digits}` (runPhase's names), or -1 for any other pod. */
export function podIndex(name: string, prefix: string): number {
  if (!name.startsWith(prefix) || name.length === prefix.length) return -1;
  let n = 0;
  for (let i = prefix.length; i < name.length; i++) {
    const d = name.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}
