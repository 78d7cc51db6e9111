/** The live feed of scheduling decisions; a row expands to its explanation. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { DecisionDetailView } from './decision-detail.js';
import { formatAge, formatClock, formatMs } from './format.js';
import type { DashboardState } from './live.js';
import type { DecisionResult, DecisionSummary } from './operations.js';
import { useStore } from './store.js';
import { Badge, Empty, LiveDot, Panel } from './ui.js';
import { ui } from './ui-state.js';

type Filter = 'all' | DecisionResult;

const RESULT_TEXT: Record<DecisionResult, string> = {
  SCHEDULED: 'scheduled',
  UNSCHEDULABLE: 'unschedulable',
  ERROR: 'error',
};
const RESULT_TONE = { SCHEDULED: 'ok', UNSCHEDULABLE: 'warn', ERROR: 'bad' } as const;

export function DecisionFeed(props: { state: DashboardState }) {
  const { decisions, decisionStream, now } = props.state;
  const expanded = useStore(ui, (s) => s.expandedDecision);
  const [filter, setFilter] = useState<Filter>('all');
  const [paused, setPaused] = useState<DecisionSummary[] | null>(null);
  const shown = (paused ?? decisions).filter((d) => filter === 'all' || d.result === filter);
  const fresh = paused ? decisions.filter((d) => !paused.some((p) => p.id === d.id)).length : 0;
  const perMinute = decisions.filter((d) => now - Date.parse(d.time) < 60_000).length;

  return (
    <Panel
      id="decisions"
      title="Scheduling decisions"
      class="feed-panel"
      error={props.state.errors.history}
      subtitle={
        <>
          <LiveDot state={decisionStream} label="stream" /> <span class="dim">{perMinute}/min</span>
        </>
      }
      actions={
        <div class="controls">
          <select
            value={filter}
            onChange={(e) => setFilter((e.currentTarget as HTMLSelectElement).value as Filter)}
            aria-label="Show decisions"
          >
            <option value="all">all results</option>
            <option value="SCHEDULED">scheduled</option>
            <option value="UNSCHEDULABLE">unschedulable</option>
            <option value="ERROR">errors</option>
          </select>
          <button
            type="button"
            class="btn"
            onClick={() => setPaused(paused ? null : decisions)}
            aria-pressed={!!paused}
          >
            {paused ? `resume${fresh ? ` (+${fresh})` : ''}` : 'pause'}
          </button>
        </div>
      }
    >
      {!props.state.loaded.history && decisions.length === 0 ? (
        <Empty>Loading the decision history…</Empty>
      ) : shown.length === 0 ? (
        <Empty>
          No decisions yet. Create a pod with{' '}
          <code>schedulerName: {props.state.status?.schedulerName ?? 'nodeload-scheduler'}</code> and it
          appears here within a second.
        </Empty>
      ) : (
        <ol class="feed" data-testid="decision-feed">
          {shown.map((d) => (
            <FeedRow key={d.id} decision={d} open={expanded === d.id} now={now} />
          ))}
        </ol>
      )}
    </Panel>
  );
}

function FeedRow(props: { decision: DecisionSummary; open: boolean; now: number }) {
  const d = props.decision;
  const ref = useRef<HTMLLIElement>(null);
  // Only decisions made moments ago flash as they arrive, not a whole history loaded with the page.
  const [fresh] = useState(() => Date.now() - Date.parse(d.time) < 5000);
  useEffect(() => {
    if (props.open) ref.current?.scrollIntoView({ block: 'nearest' });
  }, [props.open]);
  return (
    <li
      ref={ref}
      class={`decision ${d.result.toLowerCase()} ${props.open ? 'open' : ''} ${fresh ? 'arrived' : ''}`}
      data-decision={d.id}
    >
      <button
        type="button"
        class="decision-row"
        aria-expanded={props.open}
        onClick={() => ui.set({ expandedDecision: props.open ? null : d.id, decisionMarks: new Map() })}
      >
        <span class="chev">{props.open ? '▾' : '▸'}</span>
        <time class="num dim" dateTime={d.time} title={`${formatAge(d.time, props.now)} ago`}>
          {formatClock(d.time)}
        </time>
        <Badge tone={RESULT_TONE[d.result]}>{RESULT_TEXT[d.result]}</Badge>
        <span class="pod" title={`${d.namespace}/${d.pod}`}>
          <span class="dim">{d.namespace}/</span>
          {d.pod}
        </span>
        <span class="arrow">
          {d.node ? (
            <>
              → <strong>{d.node}</strong>
            </>
          ) : null}
          {d.engine === 'EXTENDER' ? (
            <span class="dim" title="kube-scheduler decided, calling nodeload as its extender">
              {' '}
              via kube-scheduler
            </span>
          ) : null}
        </span>
        <span class="num dim" title="feasible / total nodes">
          {d.feasibleNodes}/{d.totalNodes}
        </span>
        <span class="num dim" title="attempt latency (filter + score + bind)">
          {formatMs(d.latencyMs)}
        </span>
      </button>
      {d.result !== 'SCHEDULED' && !props.open ? <p class="decision-msg">{d.message}</p> : null}
      {props.open ? <DecisionDetailView id={d.id} /> : null}
    </li>
  );
}
