/**
 * A JSON request body read straight off a node:http request, for the hot kube-facing routes (admission
 * reviews): what express.json checks — media type, UTF-8, identity encoding, a size limit, a top-level
 * object or array — without express's middleware chain around it. Failures carry body-parser's error
 * types (entity.too.large, entity.parse.failed, …), so clients get the answers they got through express.
 */
import type { IncomingMessage } from 'node:http';
import bytes from 'bytes';
import { parse as parseContentType } from 'content-type';

export type JsonBody =
  | { ok: true; value: unknown }
  | { ok: false; status: number; type: string; message: string };

const fail = (status: number, type: string, message: string): JsonBody => ({
  ok: false,
  status,
  type,
  message,
});

/**
 * Why this request cannot carry a JSON body we read (undefined: it can). The API server sends
 * `application/json` and never compresses a webhook call, so other encodings are refused, not inflated.
 */
export function jsonRequestProblem(headers: IncomingMessage['headers']): JsonBody | undefined {
  const contentType = headers['content-type'];
  // Every call from the API server carries the same header: one accepted before needs no parse.
  if (contentType !== undefined && contentType === lastAccepted && headers['content-encoding'] === undefined)
    return undefined;
  const problem = contentTypeProblem(headers);
  if (!problem && contentType !== undefined) lastAccepted = contentType;
  return problem;
}

/** The last Content-Type jsonRequestProblem accepted. */
let lastAccepted: string | undefined;

function contentTypeProblem(headers: IncomingMessage['headers']): JsonBody | undefined {
  let type: { type: string; parameters: Record<string, string> };
  try {
    type = parseContentType(headers['content-type'] ?? '');
  } catch {
    return fail(415, 'UnsupportedMediaType', 'expected Content-Type: application/json');
  }
  if (type.type !== 'application/json') {
    return fail(415, 'UnsupportedMediaType', 'expected Content-Type: application/json');
  }
  const charset = type.parameters['charset']?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return fail(415, 'charset.unsupported', `unsupported charset "${charset.toUpperCase()}"`);
  }
  const encoding = (headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') {
    return fail(415, 'encoding.unsupported', `unsupported content encoding "${encoding}"`);
  }
  return undefined;
}

/** JSON.parse with body-parser's strict rule: the top level is an object or an array; empty is {}. */
export function parseJsonText(text: string): JsonBody {
  let i = 0;
  while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r'))
    i++;
  if (i === text.length) return { ok: true, value: {} };
  if (text[i] !== '{' && text[i] !== '[') {
    return fail(400, 'entity.parse.failed', 'malformed JSON: the top level must be an object or an array');
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return fail(
      400,
      'entity.parse.failed',
      `malformed JSON: ${String((err as Error).message).slice(0, 200)}`,
    );
  }
}

/**
 * Reads and parses the body, at most `limit` bytes. `done` is called once, unless the client goes away
 * first (then there is no one to answer). Past the limit the rest is not kept: the answer is 413 at once.
 */
export function readJsonBody(req: IncomingMessage, limit: number, done: (body: JsonBody) => void): void {
  const problem = jsonRequestProblem(req.headers);
  if (problem) {
    req.resume();
    done(problem);
    return;
  }
  const tooLarge = () =>
    fail(413, 'entity.too.large', `request body larger than the ${bytes.format(limit)} limit`);
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    req.resume();
    done(tooLarge());
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (body: JsonBody) => {
    if (finished) return;
    finished = true;
    done(body);
  };
  req.on('data', (chunk: Buffer) => {
    if (finished) return;
    size += chunk.length;
    if (size > limit) {
      chunks.length = 0;
      finish(tooLarge());
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
    finish(parseJsonText(buf.toString('utf8')));
  });
  // A client that goes away mid-body has no one left to answer; the error must not go unhandled.
  req.on('error', () => {
    finished = true;
  });
}
