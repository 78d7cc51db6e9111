/** manifests/scheduler/extender.yaml: kube-scheduler's extender settings match what nodeload serves. */
import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parseSchedulerConfig } from '../scheduler/profile/config.js';
import { EXTENDER_VERBS } from './metrics.js';
import { EXTENDER_PATH } from './routes.js';

const FILE = 'manifests/scheduler/extender.yaml';

describe(FILE, () => {
  const text = readFileSync(FILE, 'utf8');
  // biome-ignore lint/suspicious/noExplicitAny: the document as YAML, checked field by field below.
  const doc = load(text) as any;
  const extender = doc.extenders?.[0];

  it('is a KubeSchedulerConfiguration with the profile the webhook steers pods to', () => {
    const config = parseSchedulerConfig(text);
    // --scheduler-name's default (src/config.ts, above this layer).
    expect(config.profiles.map((p) => p.schedulerName)).toEqual(['default-scheduler', 'nodeload-scheduler']);
    expect(doc.extenders).toHaveLength(1);
  });

  it('calls the verbs nodeload serves, under its path, over TLS with a client certificate', () => {
    expect(new URL(extender.urlPrefix).pathname).toBe(EXTENDER_PATH);
    expect(new URL(extender.urlPrefix).protocol).toBe('https:');
    expect([extender.filterVerb, extender.prioritizeVerb, extender.bindVerb]).toEqual([...EXTENDER_VERBS]);
    expect(extender.enableHTTPS).toBe(true);
    expect(extender.tlsConfig).toMatchObject({
      caFile: expect.any(String),
      certFile: expect.any(String),
      keyFile: expect.any(String),
    });
  });

  it('sends node names (what nodeload answers with) and survives the gateway being away', () => {
    expect(extender).toMatchObject({ nodeCacheCapable: true, ignorable: true });
    expect(extender.weight).toBeGreaterThan(0);
    // managedResources would send only pods requesting those resources: rules must see every pod.
    expect(extender.managedResources).toBeUndefined();
  });
});
