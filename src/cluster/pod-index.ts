/**
 * The cluster cache's pod indexes for the hot paths: the pods bound to each node (the load model and
 * the scheduler's per-node state read them per cycle) and the pods still waiting for a node.
 */
import type { PodInfo } from './model.js';

const EMPTY: ReadonlyMap<string, PodInfo> = new Map();

export class PodIndex {
  private readonly byNode = new Map<string, Map<string, PodInfo>>();
  private readonly unscheduled = new Map<string, PodInfo>();

  /** Every pod bound to the node, terminal and deleting ones included (the load model filters). */
  onNode(node: string): ReadonlyMap<string, PodInfo> {
    return this.byNode.get(node) ?? EMPTY;
  }

  /** Pods not bound to a node that still want one (not terminal, not being deleted). */
  waiting(): Iterable<PodInfo> {
    return this.unscheduled.values();
  }

  add(key: string, pod: PodInfo): void {
    if (pod.nodeName) {
      let onNode = this.byNode.get(pod.nodeName);
      if (!onNode) {
        onNode = new Map();
        this.byNode.set(pod.nodeName, onNode);
      }
      onNode.set(key, pod);
    } else if (!pod.terminal && !pod.deleting) {
      this.unscheduled.set(key, pod);
    }
  }

  /** Removes the entry `add` made for this state of the pod. */
  remove(key: string, pod: PodInfo): void {
    if (pod.nodeName) {
      const onNode = this.byNode.get(pod.nodeName);
      onNode?.delete(key);
      if (onNode?.size === 0) this.byNode.delete(pod.nodeName);
    } else {
      this.unscheduled.delete(key);
    }
  }
}
