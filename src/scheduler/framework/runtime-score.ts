/**
 * The scoring half of a cycle, as frameworkImpl's RunPreScorePlugins and RunScorePlugins: PreScore on the
 * feasible nodes, then each Score plugin over all of them, NormalizeScore, × weight, summed; the nodes
 * ranked best first.
 */

import type { Profile, WeightedScorePlugin } from './runtime.js';
import type { NodeSnapshot } from './snapshot.js';
import type { CycleContext, CycleState } from './types.js';
import type { ScoreContribution } from './verdict.js';

export interface RankedNode {
  node: string;
  /** Σ weight × normalized score. */
  score: number;
  /** Each Score plugin's part (built when first read: most cycles' explanations never read most nodes'). */
  readonly scores: ScoreContribution[];
}

/**
 * A ranked node whose per-plugin scores, total and name live in one table for the whole cycle: runScores
 * allocates no object per node × plugin (at 1,000 nodes and 8 Score plugins that was 8,000 per cycle),
 * and an entry is two references and the parts once read (with its own name and total, and the total's
 * boxed double, it was 80 bytes per feasible node: 32 KiB per pod at 1,000 nodes).
 */
class RankedEntry implements RankedNode {
  private built: ScoreContribution[] | undefined = undefined;
  constructor(
    /** The node's index in the feasible list runScores ranked. */
    readonly row: number,
    private readonly table: ScoreTable,
  ) {}

  get node(): string {
    return (this.table.nodes[this.row] as NodeSnapshot).name;
  }

  get score(): number {
    return this.table.totals[this.row] as number;
  }

  get scores(): ScoreContribution[] {
    if (!this.built) {
      const { plugins, values } = this.table;
      const base = this.row * plugins.length;
      this.built = plugins.map((p, j) => ({
        plugin: p.name,
        weight: p.weight,
        score: values[base + j] as number,
      }));
    }
    return this.built;
  }

  toJSON(): { node: string; score: number; scores: ScoreContribution[] } {
    return { node: this.node, score: this.score, scores: this.scores };
  }
}

/** A node's index in the feasible list runScores ranked, when `r` is one of its entries. */
export function rankedRow(r: RankedNode): number | undefined {
  return r instanceof RankedEntry ? r.row : undefined;
}

interface ScoreTable {
  /** The feasible nodes, by row. */
  nodes: readonly NodeSnapshot[];
  plugins: { name: string; weight: number }[];
  /** Row per feasible node, column per plugin that ran: its normalized score. */
  values: Float64Array;
  /** Row per feasible node: Σ weight × normalized score. */
  totals: Float64Array;
}

function byScoreThenName(a: RankedNode, b: RankedNode): number {
  // -1 / 1, not b.score - a.score: a fractional difference is a heap number the sort's call boxes, one
  // per comparison (~4,000 a cycle at 420 feasible nodes: 28 KiB per pod in the allocation profile).
  if (a.score !== b.score) return a.score > b.score ? -1 : 1;
  return a.node < b.node ? -1 : a.node > b.node ? 1 : 0;
}

let rawScratch = new Float64Array(0);

/**
 * One Score plugin's raw scores before normalising, a column at a time: a view of one buffer kept between
 * cycles (runScores is synchronous and never nested), grown as needed, instead of a new one per cycle.
 */
function rawScores(count: number): Float64Array {
  if (rawScratch.length < count) rawScratch = new Float64Array(Math.max(count, 2 * rawScratch.length));
  return rawScratch.subarray(0, count);
}

/** Scores of the feasible nodes, best first (ties by node name, so the same state yields the same choice). */
export function runScores(
  profile: Profile,
  state: CycleState,
  ctx: CycleContext,
  feasible: readonly NodeSnapshot[],
): RankedNode[] {
  if (feasible.length === 0) return [];
  for (const p of profile.preScore) {
    if (p.preScore(state, ctx, feasible) === 'skip') state.skipScore.add(p.name);
  }
  const active = profile.score.filter((e) => !state.skipScore.has(e.plugin.name) && e.weight !== 0);
  const table: ScoreTable = {
    nodes: feasible,
    plugins: active.map((e) => ({ name: e.plugin.name, weight: e.weight })),
    values: new Float64Array(feasible.length * active.length),
    totals: new Float64Array(feasible.length),
  };
  const ranked: RankedNode[] = new Array(feasible.length);
  for (let i = 0; i < feasible.length; i++) ranked[i] = new RankedEntry(i, table);
  const raw = rawScores(feasible.length);
  const { values, totals } = table;
  const columns = active.length;
  // Indexed loops, not forEach with a destructuring callback: this runs for every feasible node of every
  // cycle, and the callback's frame and destructuring showed in the gateway's CPU profile.
  for (let j = 0; j < columns; j++) {
    const { plugin, weight } = active[j] as WeightedScorePlugin;
    for (let i = 0; i < feasible.length; i++) raw[i] = plugin.score(state, ctx, feasible[i] as NodeSnapshot);
    plugin.normalizeScore?.(state, ctx, raw);
    for (let i = 0; i < feasible.length; i++) {
      const s = raw[i] as number;
      values[i * columns + j] = s;
      totals[i] = (totals[i] as number) + s * weight;
    }
  }
  return ranked.sort(byScoreThenName);
}
