// The dashboard at 1,000 nodes, in Chromium: the real schema and resolvers over fixture data
// (fixture-server.ts), so the size does not depend on how many KWOK nodes the machine can hold.
// The heat map must keep every node on one screen with cells big enough to point at, and the table
// must stay virtualised. Saves test-results/dashboard-1000.png.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LaunchedBrowser, launchChromium } from './chromium.js';
import { type FixtureServer, startFixtureServer } from './fixture-server.js';

const NODES = 1000;
const SCREENSHOT = path.resolve('test-results', 'dashboard-1000.png');

let fixture: FixtureServer;
let chromium: LaunchedBrowser;
let page: Page;

beforeAll(async () => {
  fixture = await startFixtureServer({ nodes: NODES });
  chromium = await launchChromium({ width: 1600, height: 1000 });
  page = await chromium.context.newPage();
});

afterAll(async () => {
  await chromium?.close();
  await fixture?.close();
});

describe(`dashboard with ${NODES} nodes`, () => {
  it('draws every node in a heat map that fits the panel, and virtualises the table', async () => {
    await page.goto(fixture.url);
    const map = page.getByTestId('heatmap');
    await expect.poll(async () => Number(await map.getAttribute('data-nodes'))).toBe(NODES);
    const box = await map.boundingBox();
    expect(box?.height).toBeLessThanOrEqual(330);
    expect(await page.getByTestId('node-count').textContent()).toContain(`${NODES} nodes`);
    // Only the rows in view (plus a margin) are in the DOM.
    const rendered = await page.locator('[data-testid="node-table"] tbody tr[data-node]').count();
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(60);
  });

  it('shows a node’s numbers on hover and pins it on click', async () => {
    const box = await page.getByTestId('heatmap').boundingBox();
    if (!box) throw new Error('no heat map');
    await page.mouse.move(box.x + 4, box.y + 4);
    const tooltip = page.locator('.tooltip');
    await tooltip.waitFor();
    const first = [...fixture.nodeNames].sort(
      new Intl.Collator(undefined, { numeric: true }).compare,
    )[0] as string;
    expect(await tooltip.textContent()).toContain(first);
    expect(await tooltip.textContent()).toMatch(/cpu\s*\d/);
    await page.mouse.click(box.x + 4, box.y + 4);
    expect(await page.getByTestId('node-detail').textContent()).toContain(first);

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
  });

  it('lists a new decision as the fixture scheduler records it', async () => {
    fixture.decide('scale-live-0');
    await page
      .locator('[data-testid="decision-feed"] li.decision', { hasText: 'scale-live-0' })
      .waitFor({ timeout: 15_000 });
  });
});
