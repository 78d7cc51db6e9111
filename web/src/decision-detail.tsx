/**
 * One decision explained: the rules that covered the pod, every feasible node with its score and the
 * load before and after the placement against the thresholds, and why every other node was filtered.
 */
import { useEffect, useState } from 'preact/hooks';
import { candidateThresholds, type FilteredGroup, groupFiltered, reasonSummary } from './explain.js';
import { formatBytes, formatCpu, formatMs, formatPoints } from './format.js';
import { query } from './graphql.js';
import { type Candidate, DECISION, type DecisionDetail } from './operations.js';
import { Empty, LoadBar } from './ui.js';
import { type Mark, ui } from './ui-state.js';

const FIRST_ROWS = 12;
const MARKED_RUNNERS_UP = 5;

type Loaded =
  | { status: 'loading' }
  | { status: 'error'; message: string }
  | { status: 'ok'; decision: DecisionDetail };

export function DecisionDetailView(props: { id: string }) {
  const [state, setState] = useState<Loaded>({ status: 'loading' });
  useEffect(() => {
    const ctrl = new AbortController();
    query(DECISION, { id: props.id }, ctrl.signal)
      .then((data) => {
        setState({ status: 'ok', decision: data.decision });
        const marks = new Map<string, Mark>();
        for (const c of data.decision.candidates) {
          if (c.verdict === 'CHOSEN') marks.set(c.node, 'chosen');
          // The runners-up only: outlining hundreds of feasible nodes would hide the map.
          else if (c.verdict === 'FEASIBLE' && (c.rank ?? Number.POSITIVE_INFINITY) <= MARKED_RUNNERS_UP + 1)
            marks.set(c.node, 'feasible');
        }
        ui.set({ decisionMarks: marks });
      })
      .catch((err: unknown) => {
        if (!ctrl.signal.aborted)
          setState({ status: 'error', message: err instanceof Error ? err.message : String(err) });
      });
    return () => {
      ctrl.abort();
      ui.set({ decisionMarks: new Map() });
    };
  }, [props.id]);

  if (state.status === 'loading') return <div class="explain">Loading the explanation…</div>;
  if (state.status === 'error') {
    return (
      <div class="explain">
        <p class="bad-text">Could not load the explanation: {state.message}</p>
      </div>
    );
  }
  return <Explanation d={state.decision} />;
}

function Explanation(props: { d: DecisionDetail }) {
  const { d } = props;
  const [allFeasible, setAllFeasible] = useState(false);
  const [allInfeasible, setAllInfeasible] = useState(false);
  const feasible = d.candidates.filter((c) => c.feasible);
  const infeasible = d.candidates.filter((c) => !c.feasible);
  const summary = reasonSummary(d.candidates);
  const groups = groupFiltered(d.candidates);
  return (
    <div class="explain" data-testid="explanation">
      <p class="explain-msg">{d.message}</p>
      <dl class="facts">
        <dt>nodes</dt>
        <dd>
          {d.feasibleNodes} feasible of {d.totalNodes}
        </dd>
        <dt>filter + score</dt>
        <dd>{formatMs(d.algorithmMs)}</dd>
        <dt>attempt</dt>
        <dd>{formatMs(d.latencyMs)}</dd>
        <dt>queue → outcome</dt>
        <dd>{formatMs(d.e2eLatencyMs)}</dd>
        <dt>attempt #</dt>
        <dd>{d.attempts}</dd>
      </dl>
      {d.rules.length ? (
        <p class="rule-chips">
          <span class="dim">covered by </span>
          {d.rules.map((r) => (
            <span class="chip" key={`${r.namespace}/${r.name}`}>
              <code>
                {r.namespace}/{r.name}
              </code>{' '}
              cpu ≤ {r.maxCPU}% · mem ≤ {r.maxMemory}%
              {r.burst ? ` · ≤ ${r.burst.maxPlacements} per ${r.burst.windowSeconds}s` : ''}
            </span>
          ))}
        </p>
      ) : (
        <p class="dim">No NodeLoadRule covers this pod: only the built-in filters applied.</p>
      )}
      {d.rebuilt ? (
        <p class="warn-text">
          Rebuilt from an Event after a restart: {d.candidatesOmitted} candidates omitted.
        </p>
      ) : null}

      {feasible.length ? (
        <>
          <h3>Feasible nodes, best first</h3>
          <FeasibleTable rows={allFeasible ? feasible : feasible.slice(0, FIRST_ROWS)} />
          {feasible.length > FIRST_ROWS ? (
            <button type="button" class="link" onClick={() => setAllFeasible(!allFeasible)}>
              {allFeasible ? 'show fewer' : `show all ${feasible.length}`}
            </button>
          ) : null}
        </>
      ) : null}

      {infeasible.length ? (
        <>
          <h3>Filtered out</h3>
          <ul class="reason-summary">
            {summary.map(([reason, n]) => (
              <li key={reason}>
                <span class="num">{n}</span> × {reason}
              </li>
            ))}
          </ul>
          <InfeasibleTable groups={allInfeasible ? groups : groups.slice(0, FIRST_ROWS)} />
          {groups.length > FIRST_ROWS ? (
            <button type="button" class="link" onClick={() => setAllInfeasible(!allInfeasible)}>
              {allInfeasible ? 'show fewer' : `show all ${groups.length} groups`}
            </button>
          ) : null}
        </>
      ) : null}
      {d.candidates.length === 0 ? <Empty>No candidate nodes were recorded.</Empty> : null}
    </div>
  );
}

function FeasibleTable(props: { rows: Candidate[] }) {
  return (
    <table class="grid candidates">
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Node</th>
          <th scope="col" title="0–100; higher is better">
            Score
          </th>
          <th scope="col" title="CPU now → with this pod; the tick is the strictest applying maxCPU">
            CPU now → after
          </th>
          <th scope="col">Memory now → after</th>
          <th scope="col" title="Smallest margin to a threshold after placement">
            Margin
          </th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((c) => (
          <FeasibleRow key={c.node} c={c} />
        ))}
      </tbody>
    </table>
  );
}

function LoadCell(props: { c: Candidate; resource: 'cpu' | 'memory' }) {
  const load = props.c.load;
  if (!load || load.unavailable) return <span class="dim">no load</span>;
  const t = candidateThresholds(props.c);
  const cpu = props.resource === 'cpu';
  const label = cpu
    ? `${formatCpu(load.requestedCpuMilli)} requested, ${formatCpu(load.estimatedCpuMilli)} estimated in flight, of ${formatCpu(load.allocatableCpuMilli)} · max ${t.cpu}%`
    : `${formatBytes(load.requestedMemoryBytes)} requested, ${formatBytes(load.estimatedMemoryBytes)} estimated in flight, of ${formatBytes(load.allocatableMemoryBytes)} · max ${t.memory}%`;
  return (
    <LoadBar
      value={cpu ? load.cpuPercent : load.memoryPercent}
      after={cpu ? load.cpuPercentAfter : load.memoryPercentAfter}
      threshold={cpu ? t.cpu : t.memory}
      label={label}
    />
  );
}

function FeasibleRow(props: { c: Candidate }) {
  const { c } = props;
  const applied = c.rules.filter((r) => r.allowed && !r.bypassed);
  const margin = applied.length
    ? Math.min(...applied.map((r) => Math.min(r.cpuMargin, r.memoryMargin)))
    : undefined;
  const source = c.load
    ? `${c.load.source === 'REQUESTS' ? 'from requests' : 'from metrics'}${c.load.estimatedPods ? ` + ${c.load.estimatedPods} estimated` : ''}`
    : '';
  return (
    <tr class={`cand ${c.verdict.toLowerCase()}`}>
      <td class="num dim">{c.rank ?? ''}</td>
      <td class="c-name" title={`${c.node} · ${source}`}>
        {c.node}
        {c.verdict === 'CHOSEN' ? <span class="chosen-tag">chosen</span> : null}
      </td>
      <td
        class="num"
        title={
          c.scores.length
            ? c.scores.map((s) => `${s.plugin} ${s.score.toFixed(1)} × ${s.weight}`).join('\n')
            : undefined
        }
      >
        {c.score !== null ? c.score.toFixed(1) : '–'}
      </td>
      <td>
        <LoadCell c={c} resource="cpu" />
      </td>
      <td>
        <LoadCell c={c} resource="memory" />
      </td>
      <td
        class="num"
        title={
          c.burst
            ? `burst ${c.burst.placements}/${c.burst.maxPlacements} in ${c.burst.windowSeconds}s`
            : undefined
        }
      >
        {margin !== undefined ? formatPoints(margin) : <span class="dim">no rule</span>}
      </td>
    </tr>
  );
}

const GROUP_NODES = 6;

function InfeasibleTable(props: { groups: FilteredGroup[] }) {
  return (
    <table class="grid candidates">
      <thead>
        <tr>
          <th scope="col">Nodes</th>
          <th scope="col">Filtered by</th>
        </tr>
      </thead>
      <tbody>
        {props.groups.map((g) => (
          <tr key={g.nodes[0]} class="cand infeasible">
            <td class="c-nodes" title={g.nodes.join(', ')}>
              {g.nodes.slice(0, GROUP_NODES).join(', ')}
              {g.nodes.length > GROUP_NODES ? (
                <span class="dim"> +{g.nodes.length - GROUP_NODES} more</span>
              ) : null}
              {g.nodes.length > 1 ? <span class="count">{g.nodes.length}</span> : null}
            </td>
            <td class="why">
              {g.reasons.map((r, i) => (
                <span key={`${r.code}-${i}`} class="reason" title={`${r.plugin}: ${r.reason}`}>
                  <code>{r.code}</code> {r.detail}
                </span>
              ))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
