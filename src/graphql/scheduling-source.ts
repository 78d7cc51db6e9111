/** What the GraphQL layer reads from the scheduler (sources.ts adapts the live Scheduler). */
import type { NodeLoadRule } from '../rules/types.js';
import type { Decision } from '../scheduler/explain.js';
import type { HistoryPage, HistoryQuery } from '../scheduler/history.js';
import type { PendingPod } from '../scheduler/queue.js';
import type { SchedulerStatus } from '../scheduler/scheduler.js';
import type { SimulationResult } from '../scheduler/simulate.js';

export interface SchedulingSource {
  /** Newest first; throws InvalidCursorError on a malformed cursor. */
  history(query: HistoryQuery): HistoryPage;
  decision(id: string): Decision | undefined;
  pendingPods(): PendingPod[];
  status(): SchedulerStatus;
  /** Every decision as the scheduler records it — one shared object per decision; returns unsubscribe. */
  onDecision(listener: (decision: Decision) => void): () => void;
  /** What-if for a new or changed rule on the live state; changes nothing. */
  simulate(rule: NodeLoadRule): SimulationResult;
}
