/** The Nodes panel: heat map with its controls and legend, the pinned node's detail, the node table. */
import { useCallback, useMemo } from 'preact/hooks';
import { formatAge, formatBytes, formatCpu, formatPercent, formatPoints } from './format.js';
import { Heatmap } from './heatmap.js';
import type { DashboardState } from './live.js';
import {
  heatColour,
  type Metric,
  naturalCompare,
  nodeState,
  pressure,
  ruleKey,
  ruleThresholds,
  sourceLabel,
  strictestThresholds,
  type Thresholds,
  UNCOVERED,
} from './model.js';
import { NodeTable } from './node-table.js';
import type { NodeView, RuleView } from './operations.js';
import { useStore } from './store.js';
import { Badge, LoadBar, Panel } from './ui.js';
import { type Mark, type NodeOrder, ui } from './ui-state.js';

export function NodesPanel(props: { state: DashboardState }) {
  const { nodes, rules, now } = props.state;
  const against = useStore(ui, (s) => s.against);
  const metric = useStore(ui, (s) => s.metric);
  const order = useStore(ui, (s) => s.order);
  const selected = useStore(ui, (s) => s.selectedNode);
  const whatIfMarks = useStore(ui, (s) => s.whatIfMarks);
  const decisionMarks = useStore(ui, (s) => s.decisionMarks);

  const focusRule = against ? rules.find((r) => ruleKey(r) === against) : undefined;
  const strictest = useMemo(() => strictestThresholds(rules), [rules]);
  const focused = useMemo(() => (focusRule ? ruleThresholds(focusRule) : undefined), [focusRule]);
  const thresholdsOf = useCallback(
    (name: string): Thresholds | undefined =>
      focused ? focused.get(name) : (strictest.get(name) ?? UNCOVERED),
    [focused, strictest],
  );

  const ordered = useMemo(() => {
    const list = [...nodes.values()];
    if (order === 'name') return list.sort((a, b) => naturalCompare(a.name, b.name));
    const p = (n: NodeView) => {
      const t = thresholdsOf(n.name);
      return n.load && !n.load.unavailable && t ? pressure(n.load, t, metric) : -1;
    };
    return list.sort((a, b) => p(b) - p(a) || naturalCompare(a.name, b.name));
  }, [nodes, order, metric, thresholdsOf]);

  // The open decision's runners-up give way to the what-if's changes; its chosen node stays on top.
  const marks = useMemo(() => {
    if (decisionMarks.size === 0) return whatIfMarks;
    const merged = new Map<string, Mark>([...decisionMarks, ...whatIfMarks]);
    for (const [node, mark] of decisionMarks) if (mark === 'chosen') merged.set(node, mark);
    return merged;
  }, [whatIfMarks, decisionMarks]);

  const summary = useMemo(() => summarise(ordered, thresholdsOf), [ordered, thresholdsOf]);
  const selectedNode = selected ? nodes.get(selected) : undefined;

  return (
    <Panel
      id="nodes"
      title="Nodes"
      class="nodes-panel"
      error={props.state.errors.nodes}
      subtitle={
        <span data-testid="node-count">
          {nodes.size} nodes · {summary.ready} ready ·{' '}
          <span class={summary.over ? 'bad-text' : ''}>{summary.over} over threshold</span>
          {summary.unknown ? ` · ${summary.unknown} without load` : ''}
        </span>
      }
      actions={<HeatControls rules={rules} against={against} metric={metric} order={order} />}
    >
      {!props.state.loaded.nodes ? (
        <p class="empty">Loading nodes…</p>
      ) : nodes.size === 0 ? (
        <p class="empty">No nodes in the cluster yet.</p>
      ) : (
        <>
          <Heatmap
            nodes={ordered}
            thresholdsOf={thresholdsOf}
            metric={metric}
            marks={marks}
            selected={selected}
            onSelect={(selectedNode) => ui.set({ selectedNode })}
            now={now}
          />
          <Legend focus={focusRule} />
          {selectedNode ? (
            <NodeDetail node={selectedNode} rules={rules} t={thresholdsOf(selectedNode.name)} now={now} />
          ) : null}
          <NodeTable
            nodes={ordered}
            rules={rules}
            thresholdsOf={thresholdsOf}
            metric={metric}
            selected={selected}
            now={now}
          />
        </>
      )}
    </Panel>
  );
}

function summarise(nodes: NodeView[], thresholdsOf: (n: string) => Thresholds | undefined) {
  let ready = 0;
  let over = 0;
  let unknown = 0;
  for (const n of nodes) {
    if (n.ready) ready++;
    const t = thresholdsOf(n.name);
    if (!n.load || n.load.unavailable) unknown++;
    else if (t && pressure(n.load, t, 'max') > 1) over++;
  }
  return { ready, over, unknown };
}

function HeatControls(props: { rules: RuleView[]; against: string; metric: Metric; order: NodeOrder }) {
  return (
    <div class="controls">
      <label>
        against{' '}
        <select
          value={props.against}
          onChange={(e) => ui.set({ against: (e.currentTarget as HTMLSelectElement).value })}
          data-testid="against"
        >
          <option value="">strictest covering rule</option>
          {props.rules.map((r) => (
            <option key={ruleKey(r)} value={ruleKey(r)}>
              {ruleKey(r)} ({r.spec.maxCPU}/{r.spec.maxMemory})
            </option>
          ))}
        </select>
      </label>
      <Segmented
        value={props.metric}
        options={[
          ['max', 'cpu ∨ mem'],
          ['cpu', 'cpu'],
          ['memory', 'mem'],
        ]}
        onChange={(metric) => ui.set({ metric })}
        label="Colour by"
      />
      <Segmented
        value={props.order}
        options={[
          ['name', 'by name'],
          ['pressure', 'hottest first'],
        ]}
        onChange={(order) => ui.set({ order })}
        label="Order"
      />
    </div>
  );
}

function Segmented<T extends string>(props: {
  value: T;
  options: [T, string][];
  onChange: (v: T) => void;
  label: string;
}) {
  return (
    <fieldset class="segmented" aria-label={props.label}>
      {props.options.map(([value, text]) => (
        <button
          type="button"
          key={value}
          aria-pressed={props.value === value}
          class={props.value === value ? 'on' : ''}
          onClick={() => props.onChange(value)}
        >
          {text}
        </button>
      ))}
    </fieldset>
  );
}

const LEGEND_STEPS = [0, 0.25, 0.5, 0.7, 0.85, 0.95, 1, 1.15, 1.4];

function Legend(props: { focus: RuleView | undefined }) {
  return (
    <div class="legend">
      <span class="scale">
        {LEGEND_STEPS.map((r) => (
          <span key={r} style={{ background: heatColour(r) }} />
        ))}
      </span>
      <span class="dim">
        load ÷ {props.focus ? `${ruleKey(props.focus)}'s threshold` : 'strictest threshold'} · 0 → 100% → over
      </span>
      <span class="key">
        <span class="sw hatch" /> no load figure
      </span>
      <span class="key">
        <span class="sw notready" /> NotReady
      </span>
      <span class="key">
        <span class="sw stale" /> stale metrics
      </span>
      <span class="key">
        <span class="sw gain" /> what-if: becomes eligible
      </span>
      <span class="key">
        <span class="sw lose" /> becomes ineligible
      </span>
      {props.focus ? (
        <span class="key">
          <span class="sw dimmed" /> outside the rule
        </span>
      ) : null}
    </div>
  );
}

function NodeDetail(props: { node: NodeView; rules: RuleView[]; t: Thresholds | undefined; now: number }) {
  const { node, t, now } = props;
  const load = node.load;
  const verdicts = props.rules.flatMap((r) => {
    const eligible = r.evaluation.eligible.find((v) => v.node === node.name);
    if (eligible)
      return [
        { rule: ruleKey(r), eligible: true, text: `eligible · ${formatPoints(eligible.headroom)} headroom` },
      ];
    const ineligible = r.evaluation.ineligible.find((v) => v.node === node.name);
    if (!ineligible) return [];
    return [{ rule: ruleKey(r), eligible: false, text: ineligible.reasons.map((x) => x.message).join('; ') }];
  });
  const state = nodeState(node);
  return (
    <div class="node-detail" data-testid="node-detail">
      <div class="nd-head">
        <strong>{node.name}</strong>
        {state === 'notReady' ? (
          <Badge tone="bad">NotReady</Badge>
        ) : state === 'cordoned' ? (
          <Badge tone="warn">cordoned</Badge>
        ) : (
          <Badge tone="ok">Ready</Badge>
        )}
        {load ? <Badge tone={load.stale ? 'warn' : 'muted'}>{sourceLabel(load)}</Badge> : null}
        {load ? <span class="dim">figure from {formatAge(load.timestamp, now)} ago</span> : null}
        <span class="spacer" />
        <button type="button" class="link" onClick={() => ui.set({ selectedNode: null })}>
          close
        </button>
      </div>
      {load && !load.unavailable ? (
        <div class="nd-grid">
          <span class="dim">cpu</span>
          <LoadBar value={load.cpuPercent} threshold={t?.cpu ?? 100} wide />
          <span class="num">
            {formatCpu(load.effective.cpuMilli)} of {formatCpu(node.allocatable.cpuMilli)} · requests{' '}
            {formatCpu(load.requested.cpuMilli)}
          </span>
          <span class="dim">mem</span>
          <LoadBar value={load.memoryPercent} threshold={t?.memory ?? 100} wide />
          <span class="num">
            {formatBytes(load.effective.memoryBytes)} of {formatBytes(node.allocatable.memoryBytes)} ·
            requests {formatBytes(load.requested.memoryBytes)}
          </span>
          <span class="dim">pods</span>
          <span class="num">
            {load.podCount} / {node.allocatable.pods}
          </span>
          <span />
        </div>
      ) : (
        <p class="dim">
          No load figure for this node
          {load?.unavailable ? ': metrics stale or missing under fail-closed' : ' yet'}.
        </p>
      )}
      {verdicts.length ? (
        <ul class="nd-rules">
          {verdicts.map((v) => (
            <li key={v.rule}>
              <span class={v.eligible ? 'ok-text' : 'bad-text'}>{v.eligible ? '✓' : '✗'}</span>{' '}
              <code>{v.rule}</code> <span class="dim">{v.text}</span>
            </li>
          ))}
        </ul>
      ) : (
        <p class="dim">
          No rule covers this node; shown against its whole allocatable ({formatPercent(100)}).
        </p>
      )}
    </div>
  );
}
