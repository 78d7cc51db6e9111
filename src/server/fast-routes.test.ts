import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { type FastRoutes, mergeFastRoutes, requestPath, withFastRoutes } from './fast-routes.js';

describe('requestPath', () => {
  it.each([
    { url: '/mutate', path: '/mutate' },
    { url: '/mutate?timeout=10s', path: '/mutate' },
    { url: '/', path: '/' },
    { url: undefined, path: '' },
  ])('$url → $path', ({ url, path }) => {
    expect(requestPath(url)).toBe(path);
  });
});

describe('mergeFastRoutes', () => {
  const h = () => {};
  it('joins the tables', () => {
    expect([...mergeFastRoutes([new Map([['/a', h]]), new Map([['/b', h]])]).keys()]).toEqual(['/a', '/b']);
  });
  it('refuses two handlers for one path', () => {
    expect(() => mergeFastRoutes([new Map([['/a', h]]), new Map([['/a', h]])])).toThrow(/POST \/a/);
  });
});

describe('withFastRoutes', () => {
  const calls: string[] = [];
  const routes: FastRoutes = new Map([['/mutate', () => calls.push('fast')]]);
  const listener = withFastRoutes(
    routes,
    () => calls.push('express'),
    () => calls.push('activity'),
  );
  const req = (method: string, url: string) => ({ method, url }) as IncomingMessage;
  const res = {} as ServerResponse;

  it.each([
    { method: 'POST', url: '/mutate?timeout=10s', want: ['activity', 'fast'] },
    { method: 'GET', url: '/mutate', want: ['express'] },
    { method: 'POST', url: '/mutate/x', want: ['express'] },
    { method: 'POST', url: '/healthz', want: ['express'] },
  ])('$method $url → $want', ({ method, url, want }) => {
    calls.length = 0;
    listener(req(method, url), res);
    expect(calls).toEqual(want);
  });

  it('answers 500 when a handler throws, instead of an uncaught exception', () => {
    const sent: { status?: number; body?: string } = {};
    const fake = {
      headersSent: false,
      setHeader() {},
      end(body: string) {
        sent.body = body;
      },
      set statusCode(s: number) {
        sent.status = s;
      },
    } as unknown as ServerResponse;
    const throwing = withFastRoutes(
      new Map([
        [
          '/mutate',
          () => {
            throw new Error('bug');
          },
        ],
      ]),
      () => {},
    );
    throwing(req('POST', '/mutate'), fake);
    expect(sent.status).toBe(500);
    expect(JSON.parse(sent.body ?? '')).toEqual({ error: 'InternalError', message: 'internal error' });
  });
});
