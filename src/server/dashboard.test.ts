import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP, dashboardRouter } from './dashboard.js';

async function serve(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  app.use(dashboardRouter({ dir }));
  app.use((_req, res) => {
    res.status(404).send('fallthrough');
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('dashboardRouter', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'nodeload-dashboard-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('answers 503 with build instructions while the dashboard is not built, then serves it once built', async () => {
    const dir = path.join(root, 'late');
    const server = await serve(dir);
    try {
      const before = await fetch(`${server.url}/`);
      expect(before.status).toBe(503);
      expect(before.headers.get('content-type')).toMatch(/text\/html/);
      expect(await before.text()).toContain('npm run build:web');

      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>built</title>');
      const after = await fetch(`${server.url}/`);
      expect(after.status).toBe(200);
      expect(await after.text()).toContain('<title>built</title>');
    } finally {
      await server.close();
    }
  });

  it('serves the page uncached and the hashed assets as immutable, both under the same-origin CSP', async () => {
    const dir = path.join(root, 'built');
    mkdirSync(path.join(dir, 'assets'), { recursive: true });
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>dash</title>');
    writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    const server = await serve(dir);
    try {
      const page = await fetch(`${server.url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-cache');
      expect(page.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);

      const asset = await fetch(`${server.url}/assets/index-abc123.js`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/javascript/);
      expect(asset.headers.get('cache-control')).toContain('immutable');
      expect(asset.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    } finally {
      await server.close();
    }
  });

  it('leaves unknown paths to the routes after it', async () => {
    const dir = path.join(root, 'built');
    const server = await serve(dir);
    try {
      for (const p of ['/assets/missing.js', '/graphql', '/nodes']) {
        const res = await fetch(`${server.url}${p}`);
        expect(res.status, p).toBe(404);
        expect(await res.text(), p).toBe('fallthrough');
      }
    } finally {
      await server.close();
    }
  });
});
