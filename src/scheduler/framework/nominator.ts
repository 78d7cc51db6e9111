/**
 * Nominated pods, as kube-scheduler's nominator keeps them: a pending pod whose preemption made room on
 * a node (status.nominatedNodeName) holds that room against pods of lower priority until it binds, is
 * deleted, or is nominated elsewhere. Filter counts, for pod P on node N, every pod nominated to N with
 * priority ≥ P's (upstream's addNominatedPods; framework/runtime.ts).
 *
 * Fed from the informer for pods of every scheduler (a default-scheduler preemptor's room is held too)
 * and from this scheduler's own nominations, which count at once — before the status patch comes back.
 * As upstream's, an informer update without a nominatedNodeName keeps a nomination this scheduler made
 * until the API has shown it once (the update predates our patch); from then on the API is followed.
 */
import { type PodInfo, podKey } from '../../cluster/model.js';

/** What Filter reads (CycleContext.nominated). */
export interface NominatedPods {
  /** How many pods are nominated, anywhere: Filter skips the per-node look-up while there are none. */
  readonly size: number;
  /** The pods nominated to the node, in nomination order. */
  forNode(node: string): Iterable<PodInfo>;
  /** Where the pod is nominated, if anywhere. */
  nodeOf(key: string): string | undefined;
}

const NONE: readonly PodInfo[] = Object.freeze([]);

interface Entry {
  pod: PodInfo;
  node: string;
  /** Nominated by this scheduler and not yet seen in the API (kept over updates without it). */
  local: boolean;
}

export class Nominator implements NominatedPods {
  private readonly byKey = new Map<string, Entry>();
  private readonly byNode = new Map<string, Map<string, PodInfo>>();

  get size(): number {
    return this.byKey.size;
  }

  forNode(node: string): Iterable<PodInfo> {
    return this.byNode.get(node)?.values() ?? NONE;
  }

  nodeOf(key: string): string | undefined {
    return this.byKey.get(key)?.node;
  }

  /** A pod as the informer shows it (add or update). */
  upsertPod(pod: PodInfo): void {
    const key = podKey(pod);
    const cur = this.byKey.get(key);
    if (cur && cur.pod.uid !== pod.uid) this.delete(key);
    if (pod.nodeName || pod.terminal || pod.deleting) {
      this.delete(key);
      return;
    }
    if (pod.nominatedNodeName) {
      // The API has it now: from here on an update without it means it was cleared.
      this.set(key, pod, pod.nominatedNodeName, false);
      return;
    }
    const mine = this.byKey.get(key);
    if (mine?.local) this.set(key, pod, mine.node, true);
    else this.delete(key);
  }

  /** This scheduler nominated the pod to `node` (its status patch is on its way). */
  nominate(pod: PodInfo, node: string): void {
    this.set(podKey(pod), pod, node, true);
  }

  /** The pod bound, went away, or its nomination was cleared. */
  delete(key: string): void {
    const cur = this.byKey.get(key);
    if (!cur) return;
    this.byKey.delete(key);
    const onNode = this.byNode.get(cur.node);
    onNode?.delete(key);
    if (onNode?.size === 0) this.byNode.delete(cur.node);
  }

  clear(): void {
    this.byKey.clear();
    this.byNode.clear();
  }

  private set(key: string, pod: PodInfo, node: string, local: boolean): void {
    const cur = this.byKey.get(key);
    if (cur && cur.node !== node) this.delete(key);
    this.byKey.set(key, { pod, node, local });
    let onNode = this.byNode.get(node);
    if (!onNode) {
      onNode = new Map();
      this.byNode.set(node, onNode);
    }
    onNode.set(key, pod);
  }
}
