/** What the viewer has chosen on the page: selections, heat-map options, the what-if draft. */
import type { Metric } from './model.js';
import { Store } from './store.js';

export type NodeOrder = 'name' | 'pressure';

export interface UiState {
  /** The node pinned in the detail strip (clicked in the map or table). */
  selectedNode: string | null;
  /** "" = each node against its strictest rule; otherwise a rule key (namespace/name). */
  against: string;
  metric: Metric;
  order: NodeOrder;
  /** The rule the what-if panel edits (namespace/name); "" = the first rule. */
  whatIfRule: string;
  /** The decision whose explanation is open. */
  expandedDecision: string | null;
  /** Nodes the what-if would make eligible (gain) or ineligible (lose). */
  whatIfMarks: Map<string, Mark>;
  /** The open decision's chosen and feasible nodes. */
  decisionMarks: Map<string, Mark>;
}

export type Mark = 'gain' | 'lose' | 'chosen' | 'feasible';

export const ui = new Store<UiState>({
  selectedNode: null,
  against: '',
  metric: 'max',
  order: 'name',
  whatIfRule: '',
  expandedDecision: null,
  whatIfMarks: new Map(),
  decisionMarks: new Map(),
});
