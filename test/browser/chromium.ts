/**
 * Debian's Chromium driven by playwright-core: no browser download, no traffic beyond the machine
 * (flags per shared/notes/ecosystem.md §5). playwright-core gives each launch a fresh, throw-away
 * profile directory of its own (it refuses --user-data-dir with launch()).
 */
import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env['NODELOAD_CHROMIUM'] ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export interface LaunchedBrowser {
  browser: Browser;
  /** A context with the dashboard's viewport; closed with the browser. */
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(viewport = { width: 1600, height: 1000 }): Promise<LaunchedBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `${CHROMIUM_PATH} is missing: run test/browser/ensure-chromium.sh (apt-get install chromium)`,
    );
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, colorScheme: 'dark' });
  return {
    browser,
    context,
    async close() {
      await browser.close().catch(() => {});
    },
  };
}
