// textFrames writes graphql-ws `next` messages as raw WebSocket frames beside ws's Sender: a real ws
// client must read them as the messages ws.send would have sent, at every length encoding.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { shareSerialisation } from './shared-subscriptions.js';
import { textFrames } from './websocket.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A loopback ws pair: the server side's raw socket, and the messages its client receives. */
async function pair() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const accepted = new Promise<http.IncomingMessage>((r) => wss.once('connection', (_ws, req) => r(req)));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  const messages: string[] = [];
  client.on('message', (data, binary) => messages.push(binary ? '<binary>' : String(data)));
  await new Promise<void>((r) => client.once('open', () => r()));
  const req = await accepted;
  closers.push(async () => {
    client.terminate();
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(r));
  });
  return { socket: req.socket, messages };
}

/** A shared result whose serialised JSON is `bytes` long. */
function resultOfLength(bytes: number) {
  const skeleton = JSON.stringify({ data: { s: '' } }).length;
  return shareSerialisation({ data: { s: 'x'.repeat(bytes - skeleton) } });
}

describe('textFrames', () => {
  // Message lengths around the 7-bit, 16-bit and 64-bit encodings: prefix (39 bytes) + payload + "}".
  const prefix = Buffer.from('{"id":"abcdef","type":"next","payload":');
  const around = (length: number) => length - prefix.length - 1;
  it.each([
    { name: 'short (7-bit length)', payloads: [20, 40] },
    { name: 'exactly 125 and 126 bytes', payloads: [around(125), around(126)] },
    { name: '16-bit lengths up to 65,535', payloads: [500, around(65_535)] },
    { name: '64-bit length from 65,536', payloads: [around(65_536), 200_000] },
  ])('$name: a ws client reads each as its message', async ({ payloads }) => {
    const { socket, messages } = await pair();
    const results = payloads.map(resultOfLength);
    socket.write(textFrames(results.map((result) => ({ prefix, result }))));
    for (let i = 0; i < 200 && messages.length < results.length; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(messages).toEqual(results.map((r) => `${prefix}${JSON.stringify(r)}}`));
    expect(messages.map((m) => Buffer.byteLength(m))).toEqual(payloads.map((p) => p + prefix.length + 1));
  });
});
