/**
 * Fixtures for the aggregated API's unit tests: nodes, loads and rules built through the same
 * conversions and load model as production, and in-memory sources for a NodeLoadStore.
 */
import { NOW, rawNode } from '../../test/kit/objects.js';
import { toNodeInfo, toPodInfo } from '../cluster/convert.js';
import type { NodeInfo } from '../cluster/model.js';
import { computeNodeLoad } from '../load/model.js';
import { DEFAULT_LOAD_OPTIONS, type NodeLoad } from '../load/types.js';
import { toRule } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { NodeLoadSources } from './store.js';

export const CREATED = '2026-11-29T10:00:00Z';
export { NOW };

export function nodeInfo(
  name: string,
  opts: { cpu?: string; memory?: string; labels?: Record<string, string>; created?: string } = {},
): NodeInfo {
  return toNodeInfo(rawNode(name, { ...opts, created: opts.created ?? CREATED }));
}

/** A requests-based load from pods with these requests bound to the node. */
export function loadOf(node: NodeInfo, pods: { cpu?: string; memory?: string }[] = [], now = NOW): NodeLoad {
  return computeNodeLoad({
    node,
    pods: pods.map((p, i) =>
      toPodInfo({
        metadata: { namespace: 'default', name: `p${i}`, creationTimestamp: CREATED },
        spec: {
          nodeName: node.name,
          containers: [
            {
              name: 'app',
              resources: {
                requests: { ...(p.cpu ? { cpu: p.cpu } : {}), ...(p.memory ? { memory: p.memory } : {}) },
              },
            },
          ],
        },
        status: { phase: 'Running' },
      }),
    ),
    now,
    options: DEFAULT_LOAD_OPTIONS,
  });
}

export function rule(namespace: string, name: string, spec: Record<string, unknown> = {}): NodeLoadRule {
  return toRule({
    metadata: { namespace, name, uid: `uid-${name}`, generation: 1, resourceVersion: '1' },
    spec,
  });
}

/** In-memory sources: set nodes, loads and rules, then refresh the store. */
export class FakeSources implements NodeLoadSources {
  readonly nodes = new Map<string, NodeInfo>();
  readonly loads = new Map<string, NodeLoad>();
  ruleList: NodeLoadRule[] = [];
  /** Called inside loadOf, to imitate a tracker that applies a pending change (and emits) on read. */
  onLoadOf?: (name: string) => void;

  node(name: string): NodeInfo | undefined {
    return this.nodes.get(name);
  }

  nodeNames(): Iterable<string> {
    return this.nodes.keys();
  }

  loadOf(name: string): NodeLoad | undefined {
    this.onLoadOf?.(name);
    return this.loads.get(name);
  }

  rules(): Iterable<NodeLoadRule> {
    return this.ruleList;
  }

  /** Adds or replaces a node with a load from these pods. */
  set(
    name: string,
    pods: { cpu?: string; memory?: string }[] = [],
    labels: Record<string, string> = {},
  ): void {
    const node = nodeInfo(name, { labels });
    this.nodes.set(name, node);
    this.loads.set(name, loadOf(node, pods));
  }

  remove(name: string): void {
    this.nodes.delete(name);
    this.loads.delete(name);
  }
}
