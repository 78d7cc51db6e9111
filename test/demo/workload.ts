/**
 * The demo's moving parts: background pods pinned to nodes (load that is not ours to place),
 * Deployments scaled up and down, and Jobs, so scheduling decisions keep flowing.
 */
import {
  type AppsV1Api,
  type BatchV1Api,
  type CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function template(app: string, cpu: string, memory: string): V1PodTemplateSpec {
  return {
    metadata: { labels: { app } },
    spec: {
      // KWOK runs no container: the image is never pulled.
      containers: [{ name: app, image: 'registry.invalid/demo:1', resources: { requests: { cpu, memory } } }],
    },
  };
}

export async function workloadLoop(opts: {
  core: CoreV1Api;
  apps: AppsV1Api;
  batch: BatchV1Api;
  nodes: string[];
  log: (msg: string) => void;
  stopped: () => boolean;
}): Promise<void> {
  const { core, apps, batch } = opts;
  // Background load: pods pinned by nodeName in an unruled namespace (the validating webhook only
  // looks at ruled namespaces), so nodes start at different loads.
  for (const [i, node] of opts.nodes.entries()) {
    const count = i % 4;
    for (let j = 0; j < count; j++) {
      await core
        .createNamespacedPod({
          namespace: 'background',
          body: {
            metadata: { name: `bg-${node}-${j}` },
            spec: { nodeName: node, ...template('background', `${500 + 250 * ((i + j) % 5)}m`, '2Gi').spec! },
          },
        })
        .catch(() => undefined);
    }
  }
  const deployments = [
    { namespace: 'shop', name: 'frontend', cpu: '500m', memory: '1Gi', min: 2, max: 14 },
    { namespace: 'shop', name: 'checkout', cpu: '250m', memory: '512Mi', min: 1, max: 6 },
    { namespace: 'default', name: 'web', cpu: '1', memory: '2Gi', min: 1, max: 6 },
  ];
  for (const d of deployments) {
    await apps
      .createNamespacedDeployment({
        namespace: d.namespace,
        body: {
          metadata: { name: d.name },
          spec: {
            replicas: d.min,
            selector: { matchLabels: { app: d.name } },
            template: template(d.name, d.cpu, d.memory),
          },
        },
      })
      .catch(() => undefined);
  }
  let tick = 0;
  while (!opts.stopped()) {
    tick++;
    for (const [i, d] of deployments.entries()) {
      // A slow wave per deployment, out of phase with each other.
      const phase = Math.sin((tick + i * 3) / 4);
      const replicas = Math.round(d.min + ((d.max - d.min) * (phase + 1)) / 2);
      await apps
        .patchNamespacedDeploymentScale(
          {
            namespace: d.namespace,
            name: d.name,
            body: { spec: { replicas } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        )
        .catch(() => undefined);
    }
    if (tick % 3 === 0) {
      const name = `crunch-${Date.now().toString(36)}`;
      await batch
        .createNamespacedJob({
          namespace: 'batch',
          body: {
            metadata: { name },
            spec: {
              parallelism: 4,
              completions: 8,
              ttlSecondsAfterFinished: 60,
              template: {
                ...template('crunch', '2', '4Gi'),
                spec: { ...template('crunch', '2', '4Gi').spec!, restartPolicy: 'Never' },
              },
            },
          },
        })
        .then(() => opts.log(`job batch/${name} created`))
        .catch(() => undefined);
    }
    await sleep(5000);
  }
}

/**
 * Node usage that follows what runs there: 40-90% of each pod's requests (pods rarely use all they
 * ask for) plus a slow per-node wave of system overhead, sampled every 5 s.
 */
export async function usageLoop(opts: {
  core: CoreV1Api;
  metrics: { setUsage(node: string, usage: { cpu: string; memory: string }): void };
  nodes: { name: string; cpu: string | number; memory: string }[];
  stopped: () => boolean;
}): Promise<void> {
  const cpuOf = (q: string | undefined) =>
    !q ? 0 : q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000;
  const memOf = (q: string | undefined) => {
    if (!q) return 0;
    const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi)?$/.exec(q);
    if (!m) return 0;
    return Number(m[1]) * ({ Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 }[m[2] ?? ''] ?? 1);
  };
  let tick = 0;
  while (!opts.stopped()) {
    tick++;
    const pods = await opts.core
      .listPodForAllNamespaces({ fieldSelector: 'status.phase=Running' })
      .catch(() => undefined);
    const used = new Map<string, { cpu: number; mem: number }>();
    for (const p of pods?.items ?? []) {
      const node = p.spec?.nodeName;
      if (!node) continue;
      const u = used.get(node) ?? { cpu: 0, mem: 0 };
      const share = 0.4 + 0.5 * Math.abs(Math.sin((tick + (p.metadata?.name?.length ?? 0)) / 7));
      for (const c of p.spec?.containers ?? []) {
        u.cpu += cpuOf(c.resources?.requests?.['cpu']) * share;
        u.mem += memOf(c.resources?.requests?.['memory']) * 0.8;
      }
      used.set(node, u);
    }
    for (const [i, n] of opts.nodes.entries()) {
      const u = used.get(n.name) ?? { cpu: 0, mem: 0 };
      const overhead = 0.04 + 0.04 * Math.sin((tick + i * 5) / 9);
      const cpu = Math.round(u.cpu + cpuOf(String(n.cpu)) * overhead);
      const mem = Math.round(u.mem + memOf(n.memory) * overhead);
      opts.metrics.setUsage(n.name, { cpu: `${cpu}m`, memory: String(mem) });
    }
    await sleep(5000);
  }
}
