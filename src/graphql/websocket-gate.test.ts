import type { Client } from 'graphql-ws';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeUserPortAuth } from '../server/testing.js';
import { UserPortGate } from '../server/user-port-gate.js';
import { createGraphQLYoga } from './server.js';
import { FixtureCluster, fixtureSources, serveWebSocket, until, webSocketClient } from './testing.js';

const log = pino({ level: 'silent' });
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function query(client: Client): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let result: unknown;
    client.subscribe(
      { query: '{ nodes { name } }' },
      { next: (r) => (result = r), error: reject, complete: () => resolve(result) },
    );
  });
}

async function served(gate: UserPortGate) {
  const yoga = createGraphQLYoga({ sources: fixtureSources(new FixtureCluster()), log });
  const auth = fakeUserPortAuth({ users: { tok: { name: 'viewer', can: ['list nodes'] } } }).auth;
  const s = await serveWebSocket(yoga, { auth, gate });
  closers.push(s.close);
  const client = webSocketClient(s.url, 'tok');
  closers.push(() => client.dispose() as Promise<void>);
  return client;
}

describe('graphql-ws queries take their turn at the user port gate', () => {
  it('waits while the gate is taken, then runs', async () => {
    const gate = new UserPortGate({ concurrency: 1, maxQueued: 10, maxWaitMs: 10_000, holdMs: 60_000 });
    const client = await served(gate);
    const held = await gate.acquire();
    let answered = false;
    const answer = query(client).then((r) => {
      answered = true;
      return r;
    });
    await until(() => gate.waiting === 1, 'the query queued at the gate');
    expect(answered).toBe(false);
    held();
    expect(await answer).toMatchObject({ data: { nodes: expect.any(Array) } });
    expect(gate.inFlight).toBe(0);
  });

  it('answers SERVICE_UNAVAILABLE, and keeps the socket, when the gate is full', async () => {
    const gate = new UserPortGate({ concurrency: 1, maxQueued: 0, maxWaitMs: 10_000, holdMs: 60_000 });
    const client = await served(gate);
    const held = await gate.acquire();
    expect(await query(client)).toMatchObject({
      errors: [
        {
          message: expect.stringContaining('the gateway is busy'),
          extensions: { code: 'SERVICE_UNAVAILABLE', reason: 'queue_full' },
        },
      ],
    });
    held();
    expect(await query(client)).toMatchObject({ data: { nodes: expect.any(Array) } });
  });
});
