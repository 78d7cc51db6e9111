/**
 * The burst guard's memory: recent placements per node (with the rules that covered each pod), counted
 * over sliding windows. Metrics lag by tens of seconds and estimates can be wrong, so a hard cap on
 * placements per node per window is what stops a burst from piling onto one node. A placement counts
 * from the moment it is assumed; a failed bind takes it back.
 */
/** How many placements a node had recently; `rule` narrows to the placements of that rule's pods. */
export interface BurstView {
  placements(node: string, windowSeconds: number, rule?: string): number;
}

interface Placement {
  at: number;
  podKey: string;
  node: string;
  /** Rule keys (namespace/name) covering the pod. */
  rules: readonly string[];
}

export interface PlacementLogOptions {
  now: () => number;
  /** Placements older than this are forgotten; no window may be longer. */
  maxWindowSeconds?: number;
}

export const DEFAULT_MAX_BURST_WINDOW_SECONDS = 3600;

export class PlacementLog implements BurstView {
  private readonly byNode = new Map<string, Placement[]>();
  private readonly byPod = new Map<string, Placement>();
  private readonly now: () => number;
  private readonly maxWindowMs: number;

  constructor(opts: PlacementLogOptions) {
    this.now = opts.now;
    this.maxWindowMs = (opts.maxWindowSeconds ?? DEFAULT_MAX_BURST_WINDOW_SECONDS) * 1000;
  }

  record(podKey: string, node: string, rules: readonly string[]): void {
    this.remove(podKey);
    const p: Placement = { at: this.now(), podKey, node, rules };
    let list = this.byNode.get(node);
    if (!list) {
      list = [];
      this.byNode.set(node, list);
    }
    list.push(p);
    this.byPod.set(podKey, p);
    this.prune(list, node);
  }

  /** Takes a placement back (its bind failed). */
  remove(podKey: string): void {
    const p = this.byPod.get(podKey);
    if (!p) return;
    this.byPod.delete(podKey);
    const list = this.byNode.get(p.node);
    if (!list) return;
    const i = list.lastIndexOf(p);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.byNode.delete(p.node);
  }

  /** Placements on the node within the last windowSeconds, of the rule's pods when a rule key is given. */
  placements(node: string, windowSeconds: number, rule?: string): number {
    const list = this.byNode.get(node);
    if (!list) return 0;
    const since = this.now() - windowSeconds * 1000;
    let n = 0;
    for (let i = list.length - 1; i >= 0; i--) {
      const p = list[i] as Placement;
      if (p.at <= since) break;
      if (rule === undefined || p.rules.includes(rule)) n++;
    }
    return n;
  }

  clear(): void {
    this.byNode.clear();
    this.byPod.clear();
  }

  private prune(list: Placement[], node: string): void {
    const horizon = this.now() - this.maxWindowMs;
    let drop = 0;
    while (drop < list.length && (list[drop] as Placement).at <= horizon) {
      const p = list[drop] as Placement;
      if (this.byPod.get(p.podKey) === p) this.byPod.delete(p.podKey);
      drop++;
    }
    if (drop > 0) list.splice(0, drop);
    if (list.length === 0) this.byNode.delete(node);
  }
}
