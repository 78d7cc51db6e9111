// The placement-quality bench's report (quality.bench.ts runs the scenario): the state after placement,
// how it evolves minute by minute through the churn, and the ratios for the summary.
import { type BenchReport, fmt, markdownTable } from './lib.js';

export interface QualityOptions {
  nodes: number;
  pods: number;
  churnSeconds: number;
  /** Usage of a placed pod = its requests × factor. */
  factor: number;
  /**
   * 0: every sample is published at once, the placement at its time (window 2 s). Otherwise samples
   * are published as metrics-server scrapes: every `scrapeSeconds`, each a rate over the window of that
   * length ending at it (a pod bound within it shows the part of the window it ran).
   */
  scrapeSeconds?: number;
}

/** The rule's thresholds, and the line "nodes over" counts against. */
export const THRESHOLD = 80;

/** One sample of a pool's nodes by usage. */
export interface UsageSummary {
  maxCpu: number;
  sdCpu: number;
  maxMem: number;
  sdMem: number;
  over: number;
  /** Seconds since the churn began (0 for samples before it). */
  atSeconds: number;
}

export interface QualityResults {
  opts: QualityOptions;
  waves: number;
  afterPlacement: { kube: UsageSummary; nodeload: UsageSummary };
  pending: { kube: number; nodeload: number };
  violations: number;
  /** The samples taken through the churn, per pool. */
  churn: { kube: UsageSummary[]; nodeload: UsageSummary[] };
  /** The busiest node's own CPU usage, before any pod: no placement can bring the maximum below it. */
  floorCpuPercent: number;
}

const mean = (xs: readonly UsageSummary[], k: 'maxCpu' | 'sdCpu' | 'over') =>
  xs.reduce((a, s) => a + s[k], 0) / Math.max(1, xs.length);

/** Per minute of churn: each pool's means over that minute's samples. */
function churnByMinute(r: QualityResults): string[][] {
  const minutes = Math.max(1, Math.ceil(r.opts.churnSeconds / 60));
  const rows: string[][] = [];
  for (let m = 0; m < minutes; m++) {
    const of = (xs: readonly UsageSummary[]) => xs.filter((s) => Math.floor(s.atSeconds / 60) === m);
    const k = of(r.churn.kube);
    const n = of(r.churn.nodeload);
    if (k.length === 0 && n.length === 0) continue;
    rows.push([
      String(m + 1),
      mean(k, 'maxCpu').toFixed(1),
      mean(n, 'maxCpu').toFixed(1),
      mean(k, 'sdCpu').toFixed(1),
      mean(n, 'sdCpu').toFixed(1),
      mean(k, 'over').toFixed(1),
      mean(n, 'over').toFixed(1),
    ]);
  }
  return rows;
}

export function qualityReport(r: QualityResults): BenchReport {
  const { opts } = r;
  const k = r.afterPlacement.kube;
  const n = r.afterPlacement.nodeload;
  const row = (label: string, s: UsageSummary, pend: number, viol: number | string) => [
    label,
    s.maxCpu.toFixed(1),
    s.sdCpu.toFixed(1),
    s.maxMem.toFixed(1),
    s.sdMem.toFixed(1),
    String(s.over),
    String(pend),
    String(viol),
  ];
  const lag = opts.scrapeSeconds ?? 0;
  const size = `${fmt.int(opts.nodes)} nodes${lag > 0 ? `, metrics scraped every ${lag} s` : ''}`;
  const table = [
    markdownTable(
      [
        'after placement',
        'max CPU %',
        'σ CPU',
        'max mem %',
        'σ mem',
        `nodes > ${THRESHOLD} %`,
        'pending',
        'rule violations',
      ],
      [
        row('kube-scheduler (default profile)', k, r.pending.kube, 'n/a (no rules)'),
        row('nodeload (rule maxCPU/maxMemory 80)', n, r.pending.nodeload, r.violations),
        [
          '**nodeload ÷ kube-scheduler**',
          fmt.ratio(n.maxCpu / k.maxCpu),
          fmt.ratio(n.sdCpu / k.sdCpu),
          fmt.ratio(n.maxMem / k.maxMem),
          fmt.ratio(n.sdMem / k.sdMem),
          '',
          '',
          '',
        ],
      ],
    ),
    '',
    markdownTable(
      [
        `churn, ${opts.churnSeconds} s: means per minute`,
        'max CPU % kube-scheduler',
        'max CPU % nodeload',
        'σ CPU kube-scheduler',
        'σ CPU nodeload',
        `nodes > ${THRESHOLD} % kube-scheduler`,
        `nodes > ${THRESHOLD} % nodeload`,
      ],
      [
        ...churnByMinute(r),
        [
          '**whole churn**',
          mean(r.churn.kube, 'maxCpu').toFixed(1),
          mean(r.churn.nodeload, 'maxCpu').toFixed(1),
          mean(r.churn.kube, 'sdCpu').toFixed(1),
          mean(r.churn.nodeload, 'sdCpu').toFixed(1),
          mean(r.churn.kube, 'over').toFixed(1),
          mean(r.churn.nodeload, 'over').toFixed(1),
        ],
      ],
    ),
  ].join('\n');
  return {
    title: `Placement quality at ${size} per pool: what load-awareness buys${lag > 0 ? ' when usage lags' : ''}`,
    setup:
      `${fmt.int(opts.nodes)} KWOK nodes per pool (8 CPU / 32 GiB); 3 in 10 busy with usage their requests do not ` +
      `show (65 % CPU, 55 % memory), the rest at 10 % / 15 %, served through metrics.k8s.io behind the real ` +
      `aggregator; ${fmt.int(opts.pods)} pods per pool (250m–1 CPU, 512Mi–3Gi) in ${r.waves} waves; usage = base + ` +
      `requests × ${opts.factor} of the pods placed, ` +
      (lag > 0
        ? `served as metrics-server does: a sample every ${lag} s, a rate over the ${lag} s window ending at it ` +
          `(a pod bound within it shows the fraction of the window it ran, so usage lags placement by up to ` +
          `${lag} s; nodeload counts such pods at their estimate, by the sample's window, and polls every 2 s); then `
        : 'refreshed every 2 s (nodeload polls metrics every 2 s); then ') +
      `${opts.churnSeconds} s of churn, a tenth of each pool's pods replaced every round.`,
    table,
    ratios: [
      {
        metric: `max node CPU % by usage after placement (${size})`,
        value: n.maxCpu / k.maxCpu,
        anchor: 'kube-scheduler',
        note: `lower is better; floor ${fmt.ratio(r.floorCpuPercent / k.maxCpu)} (the busiest node's own usage)`,
      },
      {
        metric: `σ of node CPU % after placement (${size})`,
        value: n.sdCpu / k.sdCpu,
        anchor: 'kube-scheduler',
        note: 'lower is better',
      },
    ],
    notes: [
      `What bounds the max-CPU ratio: the busy nodes run at ${r.floorCpuPercent.toFixed(1)} % CPU of their own before ` +
        'any pod is placed, so no scheduler can bring the maximum below that: the floor for the ratio is ' +
        `${r.floorCpuPercent.toFixed(1)} ÷ kube-scheduler's ${k.maxCpu.toFixed(1)} = ${fmt.ratio(r.floorCpuPercent / k.maxCpu)}. ` +
        (n.maxCpu <= r.floorCpuPercent + 0.05
          ? 'nodeload is at the floor: it placed nothing more on the busiest node.'
          : `nodeload is ${(n.maxCpu - r.floorCpuPercent).toFixed(1)} points above it.`),
      'A rule violation is a nodeload pod placed on a node that was over the rule threshold by usage at the sample before.',
      'Designs compared in the text (README): Trimaran’s LoadVariationRiskBalancing scores by mean + k·σ of usage; Koordinator’s LoadAware filters by usage thresholds and scores least-used with estimates for recent pods — nodeload’s model is the latter’s, per namespace through NodeLoadRules.',
    ],
  };
}
