/**
 * A JSON answer written in one piece, for the hot kube-facing routes (admission reviews, extender verbs).
 * express's res.send turns a string body into a Buffer (to hash it for an ETag and count its bytes), and
 * Node then writes the header block and the body as two buffers — a gathered write through TLS. Given a
 * string, Node joins the header block and the body into one write. Over HTTPS with keep-alive, a 3 KB
 * review answer cost 0.37 ms of server CPU through res.send and 0.29 ms this way (raw node:https 0.27 ms);
 * the webhook's memoised ~11 KB answers, once kept as Buffers (so a header string and a body Buffer:
 * writev), cost 2.6× the CPU in the socket write that the same bytes as one string do.
 */
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, body: string, status = 200): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
