// The dashboard in a real browser (Debian's Chromium via playwright-core) against the real gateway:
// every component of src/components.ts in-process on the local control plane, KWOK nodes of this file's
// own pool, pods for a scheduler name of this file only. Port 8080 is authenticated as in a cluster: the
// page opens with a login link carrying a read-only ServiceAccount's token (as `npm run demo` prints it).
// Loads the page, finds the nodes, watches a decision arrive live after a pod is created, opens its
// explanation, runs a what-if, and saves a screenshot to test-results/dashboard.png; without a token it
// asks for one, a token revoked while the page is open (its live stream ended UNAUTHENTICATED) brings the
// sign-in form back, GraphiQL sends the token too, and a user holding only `view` in the namespace sees its
// pending pods with the scheduler's status shown as not permitted.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { CustomObjectsApi, RbacAuthorizationV1Api, type V1Pod } from '@kubernetes/client-node';
import pino from 'pino';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { allComponents } from '../../src/components.js';
import { parseConfig } from '../../src/config.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { createFakeNodes, deleteFakeNodes } from '../cluster/nodes.js';
import { createViewer, type Viewer } from '../cluster/viewer.js';
import {
  coreApi,
  createNamespace,
  kubeConfig,
  type TestNamespace,
  uniqueName,
  waitFor,
} from '../integration/context.js';
import { type LaunchedBrowser, launchChromium } from './chromium.js';

const POOL_LABEL = 'nodeload.test/pool';
const SCREENSHOT = path.resolve('test-results', 'dashboard.png');

let ns: TestNamespace;
let gateway: Gateway;
let viewer: Viewer;
let chromium: LaunchedBrowser;
let page: Page;
let origin: string;
let pool: string;
let nodes: string[] = [];
const schedulerName = uniqueName('nodeload-browser');
/** Every request the page made, and what it logged as an error. */
const requests: string[] = [];
const pageErrors: string[] = [];

function podBody(name: string): V1Pod {
  return {
    metadata: { name, labels: { app: 'web' } },
    spec: {
      schedulerName,
      nodeSelector: { [POOL_LABEL]: pool },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: '500m', memory: '512Mi' } },
        },
      ],
    },
  };
}

async function createPod(name: string): Promise<void> {
  await coreApi().createNamespacedPod({ namespace: ns.name, body: podBody(name) });
}

beforeAll(async () => {
  const kubeconfig = inject('kubeconfig');
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  ns = await createNamespace('browser');
  pool = uniqueName('br');
  nodes = [0, 1, 2].map((i) => `${pool}-${i}`);
  await createFakeNodes(
    kubeconfig,
    nodes.map((name) => ({ name, cpu: 2, memory: '4Gi', pods: 20, labels: { [POOL_LABEL]: pool } })),
  );
  gateway = await startGateway(
    parseConfig({
      kubeconfig,
      httpPort: 0,
      bindAddress: '127.0.0.1',
      // No anonymous access: the page signs in with the viewer's token.
      leaderElect: false,
      schedulerName,
      identity: uniqueName('browser'),
      installCrd: false,
      logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
      // Open streams' tokens re-reviewed every second (the TokenReview cache still holds a verdict 10 s).
      streamTokenReviewSeconds: 1,
    }),
    allComponents(),
  );
  origin = `http://127.0.0.1:${gateway.httpPort}`;
  viewer = await createViewer(kubeConfig(), { namespace: ns.name, name: 'dashboard' });
  await gateway.cache.ready();
  await waitFor('our nodes in the cache', () => nodes.every((n) => gateway.cache.nodes.has(n)));
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace: ns.name,
      body: {
        apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
        kind: 'NodeLoadRule',
        metadata: { name: 'web' },
        spec: { maxCPU: 60, maxMemory: 80, nodeSelector: { matchLabels: { [POOL_LABEL]: pool } } },
      },
    });
  await waitFor('rule web in the cache', () => gateway.cache.rules.has(`${ns.name}/web`));
  // Some load and some history before the page opens.
  await Promise.all(['warm-0', 'warm-1'].map(createPod));
  await waitFor('the warm-up pods bound', async () => {
    const list = await coreApi().listNamespacedPod({ namespace: ns.name });
    return list.items.length === 2 && list.items.every((p) => p.spec?.nodeName);
  });

  chromium = await launchChromium({ width: 1600, height: 1000 });
  page = await chromium.context.newPage();
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
}, 180_000);

afterAll(async () => {
  await chromium?.close();
  await gateway?.stop();
  await viewer?.remove();
  if (ns) await coreApi().deleteCollectionNamespacedPod({ namespace: ns.name, gracePeriodSeconds: 0 });
  if (nodes.length) await deleteFakeNodes(inject('kubeconfig'), nodes);
  await ns?.dispose();
});

describe('dashboard in Chromium', () => {
  it('opens with the login link, and shows the nodes with their load', async () => {
    const res = await page.goto(`${origin}/#token=${viewer.token}`);
    expect(res?.status()).toBe(200);
    await page.getByTestId('heatmap').waitFor();
    // The token went to the tab's session storage, out of the address bar and history.
    expect(page.url()).toBe(`${origin}/`);
    expect(await page.evaluate(() => sessionStorage.getItem('nodeload.token'))).toBe(viewer.token);
    const table = page.getByTestId('node-table');
    await page.getByPlaceholder('filter nodes…').fill(pool);
    for (const node of nodes) await table.locator(`tr[data-node="${node}"]`).waitFor();
    expect(await table.locator('tbody tr[data-node]').count()).toBe(nodes.length);
    // The warm-up pods put load on the pool: at least one node shows a CPU figure above zero.
    await expect
      .poll(async () =>
        (await table.locator('tbody tr[data-node] td.c-cpu .num').allTextContents()).some((t) => t !== '0%'),
      )
      .toBe(true);
    // Pinning a node shows its detail with the rule's verdict.
    await table.locator(`tr[data-node="${nodes[0]}"]`).click();
    const detail = page.getByTestId('node-detail');
    await detail.waitFor();
    expect(await detail.textContent()).toContain(`${ns.name}/web`);
    expect(Number(await page.getByTestId('heatmap').getAttribute('data-nodes'))).toBeGreaterThanOrEqual(
      nodes.length,
    );
    // The live streams are connected.
    await page.locator('.live.live', { hasText: 'decisions' }).waitFor();
    // No metrics.k8s.io on this cluster: the rule's card says its nodes are judged by requests, and why.
    const byRequests = page.locator(`li.rule[data-rule="${ns.name}/web"] .badge`, { hasText: 'by requests' });
    await byRequests.waitFor();
    expect(await byRequests.getAttribute('title')).toMatch(
      /^metrics\.k8s\.io does not serve node metrics: \d+ nodes? judged by requests$/,
    );
  });

  it('receives a decision live within seconds of a pod being created, and explains it', async () => {
    const pod = 'live-0';
    const row = page.locator('[data-testid="decision-feed"] li.decision', { hasText: pod });
    expect(await row.count()).toBe(0);
    await createPod(pod);
    // Arrives through the subscription (the page fetches history only when a stream (re)connects).
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toMatch(/scheduled/);
    const chosen = (await row.locator('.arrow strong').textContent())?.trim();
    expect(nodes).toContain(chosen);

    await row.locator('.decision-row').click();
    const explanation = row.getByTestId('explanation');
    await explanation.waitFor();
    const text = (await explanation.textContent()) ?? '';
    expect(text).toContain(`Successfully assigned ${ns.name}/${pod} to ${chosen}`);
    expect(text).toContain('Feasible nodes, best first');
    expect(text).toContain(`${ns.name}/web`);
    // The chosen node leads the feasible table with its score and the CPU before → after the pod.
    const first = explanation.locator('tr.cand.chosen');
    expect(await first.locator('td.c-name').textContent()).toContain(chosen);
    expect(await first.locator('td').nth(2).textContent()).toMatch(/^\d+(\.\d)?$/);
    expect(await first.locator('.loadbar .num').first().textContent()).toMatch(/%\s*→\s*\d/);
  });

  it('shows what a tighter threshold would change, from the simulation, before anything is applied', async () => {
    const panel = page.locator('#whatif');
    await panel.scrollIntoViewIfNeeded();
    await page.getByTestId('whatif-rule').selectOption(`${ns.name}/web`);
    // Three 500m pods on 2-CPU nodes: at least one node carries 25%, so maxCPU 20 must exclude it.
    await page.getByTestId('whatif-maxCPU').fill('20');
    const result = page.getByTestId('whatif-result');
    await result.waitFor({ timeout: 15_000 });
    await expect.poll(async () => (await result.textContent()) ?? '').toMatch(/become ineligible/);
    const head = (await result.locator('.sim-head strong').textContent()) ?? '';
    const [before, after] = head.split('→').map((s) => Number(s.trim()));
    expect(after).toBeLessThan(before as number);
    expect(await page.getByTestId('patch-command').textContent()).toBe(
      `kubectl -n ${ns.name} patch nodeloadrule web --type merge -p '{"spec":{"maxCPU":20}}'`,
    );
    // Nothing was applied: the rule still says 60.
    expect(gateway.cache.rules.get(`${ns.name}/web`)?.rule.spec.maxCPU).toBe(60);

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    // The top bar is sticky: scrolled to the top, it sits at the top of the full-page image too.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it('asks for a token when opened without one, and signs in with it', async () => {
    // A tab of its own (its own session storage); its 401s are expected, so they are not pageErrors.
    const tab = await chromium.context.newPage();
    try {
      await tab.goto(`${origin}/`);
      const form = tab.getByTestId('sign-in');
      await form.waitFor();
      expect(await form.textContent()).toContain('authentication required');
      await form.getByLabel('token').fill(viewer.token);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByTestId('heatmap').waitFor();
      await tab.getByPlaceholder('filter nodes…').fill(pool);
      await tab.getByTestId('node-table').locator(`tr[data-node="${nodes[0]}"]`).waitFor();
      expect(await tab.getByTestId('sign-in').count()).toBe(0);
    } finally {
      await tab.close();
    }
  });

  it('asks for a token again when the live stream ends because the token was revoked, and resumes once signed in', async () => {
    // A user of its own: deleting its ServiceAccount revokes its token.
    const leaver = await createViewer(kubeConfig(), { namespace: ns.name, name: 'leaver' });
    const tab = await chromium.context.newPage();
    const isQuery = (postData: string | null) =>
      !(JSON.parse(postData ?? '{}') as { query?: string }).query?.trimStart().startsWith('subscription');
    try {
      await tab.goto(`${origin}/#token=${leaver.token}`);
      await tab.locator('.live.live', { hasText: 'decisions' }).waitFor();
      // From now on the queries fail as a broken network would (retried, never a sign-out): only the
      // streams can learn that the token was revoked.
      await tab.route(`${origin}/graphql`, (route) =>
        isQuery(route.request().postData()) ? route.abort('failed') : route.continue(),
      );
      await coreApi().deleteNamespacedServiceAccount({ namespace: ns.name, name: 'leaver' });

      // Within the re-review period plus the TokenReview cache's 10 s.
      const form = tab.getByTestId('sign-in');
      await form.waitFor({ timeout: 45_000 });
      expect(await tab.getByTestId('sign-in-message').textContent()).toBe(
        'Your session ended: the token was revoked or expired. Sign in again.',
      );
      expect(await form.textContent()).toContain('stream closed: the token no longer authenticates');
      expect(await tab.evaluate(() => sessionStorage.getItem('nodeload.token'))).toBeNull();
      await tab.locator('.live.signed-out', { hasText: 'decisions' }).waitFor();
      // Signed out, the page asks nothing more: no reconnecting, no polling.
      const asked: string[] = [];
      tab.on('request', (r) => asked.push(r.url()));
      await tab.waitForTimeout(4000);
      expect(asked.filter((u) => u.startsWith(origin))).toEqual([]);

      await tab.unroute(`${origin}/graphql`);
      await form.getByLabel('token').fill(viewer.token);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await tab.locator('.live.live', { hasText: 'decisions' }).waitFor();
      await tab.getByPlaceholder('filter nodes…').fill(pool);
      await tab.getByTestId('node-table').locator(`tr[data-node="${nodes[0]}"]`).waitFor();
      expect(await tab.getByTestId('sign-in').count()).toBe(0);
      expect(await tab.evaluate(() => sessionStorage.getItem('nodeload.token'))).toBe(viewer.token);
    } finally {
      await tab.close();
      await leaver.remove();
    }
  }, 90_000);

  it("sends the token from GraphiQL too, passed on by the dashboard's link", async () => {
    const tab = await chromium.context.newPage();
    try {
      const href = await page.locator('a', { hasText: 'GraphiQL' }).getAttribute('href');
      expect(href).toBe(`graphql#token=${encodeURIComponent(viewer.token)}`);
      const introspection = tab.waitForRequest(
        (r) => r.url() === `${origin}/graphql` && r.method() === 'POST',
      );
      await tab.goto(`${origin}/${href}`);
      const request = await introspection;
      expect(request.headers()['authorization']).toBe(`Bearer ${viewer.token}`);
      expect((await request.response())?.status()).toBe(200);
      expect(tab.url()).toBe(`${origin}/graphql`);
    } finally {
      await tab.close();
    }
  });

  it('shows a user holding only `view` in the namespace its pending pods, and the scheduler status as not permitted', async () => {
    // A pod no node of the pool fits: pending for this file's scheduler.
    const pod = 'nowhere-0';
    const body = podBody(pod);
    await coreApi().createNamespacedPod({
      namespace: ns.name,
      body: {
        ...body,
        spec: {
          ...body.spec,
          containers: body.spec?.containers ?? [],
          nodeSelector: { [POOL_LABEL]: `${pool}-none` },
        },
      },
    });
    // The built-in `view` in this namespace: pods, not nodes, not `get /scheduler/status`.
    await coreApi().createNamespacedServiceAccount({
      namespace: ns.name,
      body: { metadata: { name: 'team' } },
    });
    await kubeConfig()
      .makeApiClient(RbacAuthorizationV1Api)
      .createNamespacedRoleBinding({
        namespace: ns.name,
        body: {
          metadata: { name: 'team-view' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
          subjects: [{ kind: 'ServiceAccount', namespace: ns.name, name: 'team' }],
        },
      });
    const request = await coreApi().createNamespacedServiceAccountToken({
      namespace: ns.name,
      name: 'team',
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const token = request.status?.token ?? '';
    expect(token).not.toBe('');
    const tab = await chromium.context.newPage();
    try {
      await tab.goto(`${origin}/#token=${token}`);
      await tab.getByTestId('pending').locator('tr', { hasText: pod }).waitFor({ timeout: 30_000 });
      const status = tab.getByTestId('scheduler-status');
      await status.waitFor();
      expect(await status.textContent()).toContain('scheduler status: not permitted');
      expect(await status.getAttribute('title')).toContain('get /scheduler/status');
      // The pending panel loaded without an error of its own.
      expect(await tab.locator('#pending .panel-error').count()).toBe(0);
    } finally {
      await tab.close();
    }
  });

  it('made no request beyond the gateway and logged no error', () => {
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
