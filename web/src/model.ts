/**
 * What the dashboard derives from the API's data, as pure functions: which rules cover which node,
 * the thresholds a node is held to, and how close its load is to them (the heat-map colour).
 */
import type { Load, NodeView, Reason, RuleView } from './operations.js';

export type Metric = 'max' | 'cpu' | 'memory';

/** Natural order: node-2 before node-10. */
export const naturalCompare = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' }).compare;

export function ruleKey(rule: { namespace: string; name: string }): string {
  return `${rule.namespace}/${rule.name}`;
}

/** Nodes in a rule's node set (allowedNodes ∩ nodeSelector), whatever their load, from its evaluation. */
export function ruleNodeSet(rule: RuleView): Set<string> {
  const set = new Set(rule.evaluation.eligible.map((v) => v.node));
  for (const v of rule.evaluation.ineligible) if (v.allowed) set.add(v.node);
  return set;
}

export interface Thresholds {
  cpu: number;
  memory: number;
  /** The rules setting the figures (the strictest per resource); empty when no rule covers the node. */
  cpuRule?: string;
  memoryRule?: string;
  /** Keys of every rule whose node set contains the node. */
  rules: string[];
}

/** Nodes no rule covers are measured against their whole allocatable. */
export const UNCOVERED: Thresholds = { cpu: 100, memory: 100, rules: [] };

/** Per node, how many rules cover it (have it in their node set) and for how many it is eligible. */
export function ruleCoverage(rules: RuleView[]): Map<string, { covering: number; eligible: number }> {
  const out = new Map<string, { covering: number; eligible: number }>();
  const at = (node: string) => {
    let c = out.get(node);
    if (!c) {
      c = { covering: 0, eligible: 0 };
      out.set(node, c);
    }
    return c;
  };
  for (const rule of rules) {
    for (const v of rule.evaluation.eligible) {
      const c = at(v.node);
      c.covering++;
      c.eligible++;
    }
    for (const v of rule.evaluation.ineligible) if (v.allowed) at(v.node).covering++;
  }
  return out;
}

/** Per node, the strictest maxCPU and maxMemory among the rules covering it. */
export function strictestThresholds(rules: RuleView[]): Map<string, Thresholds> {
  const out = new Map<string, Thresholds>();
  for (const rule of rules) {
    const key = ruleKey(rule);
    for (const node of ruleNodeSet(rule)) {
      let t = out.get(node);
      if (!t) {
        t = { cpu: Number.POSITIVE_INFINITY, memory: Number.POSITIVE_INFINITY, rules: [] };
        out.set(node, t);
      }
      t.rules.push(key);
      if (rule.spec.maxCPU < t.cpu) {
        t.cpu = rule.spec.maxCPU;
        t.cpuRule = key;
      }
      if (rule.spec.maxMemory < t.memory) {
        t.memory = rule.spec.maxMemory;
        t.memoryRule = key;
      }
    }
  }
  return out;
}

/** Thresholds of one rule for the nodes it covers (others: undefined). */
export function ruleThresholds(rule: RuleView): Map<string, Thresholds> {
  const key = ruleKey(rule);
  const t: Thresholds = {
    cpu: rule.spec.maxCPU,
    memory: rule.spec.maxMemory,
    cpuRule: key,
    memoryRule: key,
    rules: [key],
  };
  return new Map([...ruleNodeSet(rule)].map((n) => [n, t]));
}

/**
 * Load as a fraction of the threshold: 1 = exactly at it, above 1 = over. A zero threshold makes any
 * load infinitely over and no load exactly at it.
 */
export function ratio(percent: number, threshold: number): number {
  if (threshold <= 0) return percent > 0 ? Number.POSITIVE_INFINITY : 1;
  return percent / threshold;
}

export function pressure(load: Load, t: Thresholds, metric: Metric): number {
  const cpu = ratio(load.cpuPercent, t.cpu);
  const mem = ratio(load.memoryPercent, t.memory);
  return metric === 'cpu' ? cpu : metric === 'memory' ? mem : Math.max(cpu, mem);
}

export type NodeState = 'ok' | 'notReady' | 'cordoned' | 'unknown';

export function nodeState(n: NodeView): NodeState {
  if (!n.ready) return 'notReady';
  if (!n.load || n.load.unavailable) return 'unknown';
  if (!n.schedulable) return 'cordoned';
  return 'ok';
}

type Rgb = [number, number, number];

/** Colour stops over load ÷ threshold: calm teal → green → amber near the limit → red past it. */
const STOPS: [number, Rgb][] = [
  [0, [22, 58, 66]],
  [0.35, [23, 110, 92]],
  [0.6, [46, 160, 98]],
  [0.8, [170, 190, 60]],
  [0.92, [230, 170, 50]],
  [1, [240, 120, 45]],
  [1.0001, [220, 56, 66]],
  [1.5, [255, 60, 140]],
];

export function heatRgb(r: number): Rgb {
  if (!Number.isFinite(r)) return STOPS[STOPS.length - 1]![1];
  const x = Math.max(0, r);
  for (let i = 1; i < STOPS.length; i++) {
    const [x1, c1] = STOPS[i]!;
    if (x <= x1) {
      const [x0, c0] = STOPS[i - 1]!;
      const f = (x - x0) / (x1 - x0);
      return [0, 1, 2].map((k) => Math.round(c0[k]! + (c1[k]! - c0[k]!) * f)) as Rgb;
    }
  }
  return STOPS[STOPS.length - 1]![1];
}

export function heatColour(r: number): string {
  const [red, green, blue] = heatRgb(r);
  return `rgb(${red},${green},${blue})`;
}

/** Nearest-rank percentile of an unsorted list; undefined when empty. */
export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function sourceLabel(load: Load): string {
  if (load.source === 'METRICS') return 'metrics';
  if (load.source === 'METRICS_PLUS_ESTIMATE')
    return `metrics + est. ${load.estimatedPods} pod${load.estimatedPods === 1 ? '' : 's'}`;
  return 'requests';
}

/** Ineligible nodes grouped by their first reason code, largest group first. */
export function groupIneligible(rule: RuleView): [string, { node: string; reasons: Reason[] }[]][] {
  const groups = new Map<string, { node: string; reasons: Reason[] }[]>();
  for (const v of rule.evaluation.ineligible) {
    const code = v.reasons[0]?.code ?? 'Unknown';
    const list = groups.get(code) ?? [];
    list.push(v);
    groups.set(code, list);
  }
  return [...groups].sort((a, b) => b[1].length - a[1].length || naturalCompare(a[0], b[0]));
}
