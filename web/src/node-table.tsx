/**
 * The sortable node table. Rows are virtualised (only the visible ones are in the DOM), so it stays
 * smooth at thousands of nodes.
 */
import { useMemo, useState } from 'preact/hooks';
import { formatAge, formatPercent } from './format.js';
import {
  type Metric,
  naturalCompare,
  nodeState,
  pressure,
  ruleCoverage,
  sourceLabel,
  type Thresholds,
} from './model.js';
import type { NodeView, RuleView } from './operations.js';
import { LoadBar } from './ui.js';
import { ui } from './ui-state.js';

const ROW = 26;
const VIEWPORT = 320;
const OVERSCAN = 8;

type Column = 'name' | 'state' | 'pressure' | 'cpu' | 'memory' | 'source' | 'age' | 'pods' | 'rules';

interface Row {
  node: NodeView;
  t: Thresholds | undefined;
  pressure: number;
  eligible: number;
  covering: number;
}

function sortValue(row: Row, column: Column, now: number): number | string {
  const load = row.node.load;
  switch (column) {
    case 'name':
      return row.node.name;
    case 'state':
      return nodeState(row.node);
    case 'pressure':
      return row.pressure;
    case 'cpu':
      return load?.cpuPercent ?? -1;
    case 'memory':
      return load?.memoryPercent ?? -1;
    case 'source':
      return load ? sourceLabel(load) : '';
    case 'age':
      return load ? now - Date.parse(load.timestamp) : Number.POSITIVE_INFINITY;
    case 'pods':
      return load?.podCount ?? row.node.podCount;
    case 'rules':
      return row.covering ? row.eligible / row.covering : -1;
  }
}

export function NodeTable(props: {
  nodes: NodeView[];
  rules?: RuleView[];
  thresholdsOf: (node: string) => Thresholds | undefined;
  metric: Metric;
  selected: string | null;
  now: number;
}) {
  const [sort, setSort] = useState<{ column: Column; desc: boolean }>({ column: 'pressure', desc: true });
  const [filter, setFilter] = useState('');
  const [scroll, setScroll] = useState(0);

  // Across every rule, whichever one the map is focused on.
  const ruleCounts = useMemo(() => ruleCoverage(props.rules ?? []), [props.rules]);

  // `now` is left out on purpose: re-sorting every second would make rows jump while being read.
  const rows = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const list: Row[] = props.nodes
      .filter((n) => !needle || n.name.toLowerCase().includes(needle))
      .map((node) => {
        const t = props.thresholdsOf(node.name);
        return {
          node,
          t,
          pressure: node.load && !node.load.unavailable && t ? pressure(node.load, t, props.metric) : -1,
          eligible: ruleCounts.get(node.name)?.eligible ?? 0,
          covering: ruleCounts.get(node.name)?.covering ?? 0,
        };
      });
    const dir = sort.desc ? -1 : 1;
    return list.sort((a, b) => {
      const x = sortValue(a, sort.column, props.now);
      const y = sortValue(b, sort.column, props.now);
      const c =
        typeof x === 'string' && typeof y === 'string' ? naturalCompare(x, y) : (x as number) - (y as number);
      return c * dir || naturalCompare(a.node.name, b.node.name);
    });
  }, [props.nodes, props.thresholdsOf, props.metric, sort, filter, ruleCounts]);

  const first = Math.max(0, Math.floor(scroll / ROW) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scroll + VIEWPORT) / ROW) + OVERSCAN);

  const head = (column: Column, label: string, title?: string) => (
    <th
      scope="col"
      class={`c-${column}`}
      title={title}
      aria-sort={sort.column === column ? (sort.desc ? 'descending' : 'ascending') : 'none'}
    >
      <button
        type="button"
        onClick={() =>
          setSort((s) => ({
            column,
            desc: s.column === column ? !s.desc : column !== 'name' && column !== 'state',
          }))
        }
      >
        {label}
        {sort.column === column ? (sort.desc ? ' ▾' : ' ▴') : ''}
      </button>
    </th>
  );

  return (
    <div class="node-table">
      <div class="table-tools">
        <input
          type="search"
          placeholder="filter nodes…"
          value={filter}
          onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)}
          aria-label="Filter nodes by name"
        />
        <span class="dim">
          {rows.length === props.nodes.length
            ? `${rows.length} nodes`
            : `${rows.length} of ${props.nodes.length} nodes`}
        </span>
      </div>
      <div
        class="vscroll"
        style={{ height: `${Math.min(VIEWPORT, rows.length * ROW + ROW)}px` }}
        onScroll={(e) => setScroll((e.currentTarget as HTMLDivElement).scrollTop)}
      >
        <table class="grid" data-testid="node-table">
          <thead>
            <tr>
              {head('name', 'Node')}
              {head('state', 'State')}
              {head('pressure', 'Pressure', 'Load ÷ threshold (the heat-map colour)')}
              {head('cpu', 'CPU')}
              {head('memory', 'Memory')}
              {head('source', 'Source')}
              {head('age', 'Fresh', 'Age of the load figure')}
              {head('pods', 'Pods')}
              {head('rules', 'Rules', 'Eligible for / covered by')}
            </tr>
          </thead>
          <tbody>
            {first > 0 ? (
              <tr class="spacer-row" style={{ height: `${first * ROW}px` }}>
                <td colSpan={9} />
              </tr>
            ) : null}
            {rows.slice(first, last).map((r) => (
              <NodeRow key={r.node.name} row={r} selected={r.node.name === props.selected} now={props.now} />
            ))}
            {last < rows.length ? (
              <tr class="spacer-row" style={{ height: `${(rows.length - last) * ROW}px` }}>
                <td colSpan={9} />
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function NodeRow(props: { row: Row; selected: boolean; now: number }) {
  const { node, t } = props.row;
  const load = node.load;
  const state = nodeState(node);
  return (
    <tr
      class={props.selected ? 'selected' : ''}
      tabIndex={0}
      onClick={() => ui.set({ selectedNode: props.selected ? null : node.name })}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          ui.set({ selectedNode: props.selected ? null : node.name });
        }
      }}
      data-node={node.name}
    >
      <td class="c-name" title={node.name}>
        {node.name}
      </td>
      <td class="c-state">
        <span class={`state ${state}`}>
          {state === 'ok' ? 'Ready' : state === 'notReady' ? 'NotReady' : state}
        </span>
      </td>
      <td class="c-pressure num">
        {props.row.pressure >= 0 ? formatPercent(props.row.pressure * 100) : '–'}
      </td>
      <td class="c-cpu">
        {load && !load.unavailable ? <LoadBar value={load.cpuPercent} threshold={t?.cpu ?? 100} /> : '–'}
      </td>
      <td class="c-memory">
        {load && !load.unavailable ? (
          <LoadBar value={load.memoryPercent} threshold={t?.memory ?? 100} />
        ) : (
          '–'
        )}
      </td>
      <td class={`c-source ${load?.stale ? 'warn-text' : 'dim'}`}>{load ? sourceLabel(load) : '–'}</td>
      <td class={`c-age num ${load?.stale ? 'warn-text' : ''}`}>
        {load ? formatAge(load.timestamp, props.now) : '–'}
      </td>
      <td class="c-pods num">
        {load?.podCount ?? node.podCount}
        <span class="dim">/{node.allocatable.pods}</span>
      </td>
      <td class="c-rules num">
        {props.row.covering ? (
          <span class={props.row.eligible < props.row.covering ? 'warn-text' : ''}>
            {props.row.eligible}/{props.row.covering}
          </span>
        ) : (
          <span class="dim">none</span>
        )}
      </td>
    </tr>
  );
}
