/**
 * Takes a screenshot of a running dashboard, for looking at the design by hand:
 *   npx tsx test/browser/screenshot.ts http://127.0.0.1:8090/ test-results/look.png [width] [height] [--click-first-decision]
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { launchChromium } from './chromium.js';

const [url = 'http://127.0.0.1:8080/', out = 'test-results/look.png', w = '1600', h = '1000'] = process.argv
  .slice(2)
  .filter((a) => !a.startsWith('--'));
const flags = new Set(process.argv.slice(2).filter((a) => a.startsWith('--') && !a.includes('=')));
const launched = await launchChromium({ width: Number(w), height: Number(h) });
try {
  const page = await launched.context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning')
      process.stderr.write(`[console.${m.type()}] ${m.text()}\n`);
  });
  page.on('pageerror', (e) => process.stderr.write(`[pageerror] ${e.message}\n`));
  await page.goto(url);
  await page.waitForSelector('[data-testid="heatmap"]', { timeout: 15_000 });
  await page.waitForTimeout(Number(process.env['WAIT_MS'] ?? 4500));
  if (flags.has('--click-first-decision')) {
    await page.locator('.decision-row').first().click();
    await page.waitForSelector('[data-testid="explanation"]');
  }
  if (flags.has('--whatif')) {
    await page.getByTestId('whatif-maxCPU').fill('40');
    await page.waitForSelector('[data-testid="whatif-result"]');
  }
  const against = process.argv.find((a) => a.startsWith('--against='))?.slice('--against='.length);
  if (against) await page.getByTestId('against').selectOption(against);
  if (flags.has('--hover')) {
    const box = await page.getByTestId('heatmap').boundingBox();
    if (box) await page.mouse.move(box.x + 120, box.y + 30);
  }
  await page.waitForTimeout(500);
  mkdirSync(path.dirname(out), { recursive: true });
  const clip = process.argv.find((a) => a.startsWith('--clip='))?.slice('--clip='.length);
  if (clip) await page.locator(clip).screenshot({ path: out });
  else await page.screenshot({ path: out, fullPage: flags.has('--full') });
  process.stdout.write(`saved ${out}\n`);
} finally {
  await launched.close();
}
