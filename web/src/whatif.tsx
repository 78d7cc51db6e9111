/**
 * What-if: edit a rule's thresholds or node list and see, from the simulateRule query, which nodes
 * and pods would change — before anything is applied. The panel never writes; it offers the kubectl
 * command that would.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatPoints } from './format.js';
import { query } from './graphql.js';
import type { DashboardState } from './live.js';
import { naturalCompare, ruleKey } from './model.js';
import { SIMULATE, type Simulation, type SpecInput } from './operations.js';
import { useStore } from './store.js';
import { Badge, Empty, Panel } from './ui.js';
import { ui } from './ui-state.js';
import { patchCommand, specInput, whatIfMarks } from './whatif-model.js';

type Run =
  | { status: 'idle' }
  | { status: 'running' }
  | { status: 'error'; message: string }
  | { status: 'ok'; sim: Simulation };

export function WhatIfPanel(props: { state: DashboardState }) {
  const { rules, nodes } = props.state;
  const key = useStore(ui, (s) => s.whatIfRule);
  const rule = rules.find((r) => ruleKey(r) === key) ?? rules[0];
  const [draft, setDraft] = useState<SpecInput | undefined>(undefined);
  const [run, setRun] = useState<Run>({ status: 'idle' });
  const [copied, setCopied] = useState(false);
  const seq = useRef(0);

  // A different rule starts from its current spec.
  const ruleId = rule ? ruleKey(rule) : '';
  // Only a change of rule resets the draft (not every refresh of the rule object).
  useEffect(() => {
    setDraft(rule ? specInput(rule.spec) : undefined);
    setRun({ status: 'idle' });
  }, [ruleId]);

  const changed = rule && draft ? patchCommand(rule, draft) : undefined;

  // Simulate after edits settle, and again every few seconds: the answer depends on live load.
  useEffect(() => {
    if (!rule || !draft || !changed) {
      ui.set({ whatIfMarks: new Map() });
      setRun({ status: 'idle' });
      return;
    }
    let timer: ReturnType<typeof setTimeout>;
    const go = async () => {
      const mine = ++seq.current;
      setRun((r) => (r.status === 'ok' ? r : { status: 'running' }));
      try {
        const data = await query(SIMULATE, {
          namespace: rule.namespace,
          name: rule.name,
          spec: draft,
        });
        if (mine !== seq.current) return;
        setRun({ status: 'ok', sim: data.simulateRule });
        ui.set({ whatIfMarks: whatIfMarks(data.simulateRule) });
      } catch (err) {
        if (mine === seq.current)
          setRun({ status: 'error', message: err instanceof Error ? err.message : String(err) });
      }
      timer = setTimeout(go, 5000);
    };
    timer = setTimeout(go, 200);
    return () => {
      clearTimeout(timer);
      seq.current++;
    };
  }, [rule?.namespace, rule?.name, draft, changed]);

  useEffect(() => () => ui.set({ whatIfMarks: new Map() }), []);

  const nodeNames = useMemo(() => [...nodes.keys()].sort(naturalCompare), [nodes]);

  if (!rule || !draft) {
    return (
      <Panel id="whatif" title="What if…" class="whatif-panel">
        <Empty>No NodeLoadRule yet: create one and try other thresholds here before applying them.</Empty>
      </Panel>
    );
  }

  const edit = (e: Partial<SpecInput>) => setDraft({ ...draft, ...e });
  return (
    <Panel
      id="whatif"
      title="What if…"
      class="whatif-panel"
      subtitle={<span class="dim">simulated on live state · nothing is applied</span>}
    >
      <div class="whatif-form">
        <label class="full">
          <span>rule</span>
          <select
            value={ruleKey(rule)}
            onChange={(e) => ui.set({ whatIfRule: (e.currentTarget as HTMLSelectElement).value })}
            data-testid="whatif-rule"
          >
            {rules.map((r) => (
              <option key={ruleKey(r)} value={ruleKey(r)}>
                {ruleKey(r)}
              </option>
            ))}
          </select>
        </label>
        <Threshold
          label="maxCPU"
          value={draft.maxCPU}
          current={rule.spec.maxCPU}
          onChange={(maxCPU) => edit({ maxCPU })}
        />
        <Threshold
          label="maxMemory"
          value={draft.maxMemory}
          current={rule.spec.maxMemory}
          onChange={(maxMemory) => edit({ maxMemory })}
        />
        <AllowedNodes
          value={draft.allowedNodes}
          names={nodeNames}
          onChange={(allowedNodes) => edit({ allowedNodes })}
        />
        <div class="full row">
          <button
            type="button"
            class="btn"
            disabled={!changed}
            onClick={() => setDraft(specInput(rule.spec))}
          >
            reset to current
          </button>
          {run.status === 'running' ? <span class="dim">simulating…</span> : null}
        </div>
      </div>
      {run.status === 'error' ? <p class="panel-error">Simulation failed: {run.message}</p> : null}
      {!changed ? (
        <p class="dim hint">
          Move a threshold or edit the node list to see which nodes and pods would be affected.
        </p>
      ) : run.status === 'ok' ? (
        <SimulationView sim={run.sim} />
      ) : null}
      {changed ? (
        <div class="apply">
          <span class="dim">To apply:</span>
          <code data-testid="patch-command">{changed}</code>
          <button
            type="button"
            class="btn"
            onClick={() => {
              void navigator.clipboard?.writeText(changed).then(() => setCopied(true));
              setTimeout(() => setCopied(false), 1500);
            }}
          >
            {copied ? 'copied' : 'copy'}
          </button>
        </div>
      ) : null}
    </Panel>
  );
}

function Threshold(props: { label: string; value: number; current: number; onChange: (v: number) => void }) {
  const id = `whatif-${props.label}`;
  const delta = props.value - props.current;
  return (
    <label class="threshold" for={id}>
      <span>{props.label}</span>
      <input
        id={id}
        type="range"
        min={0}
        max={100}
        value={props.value}
        onInput={(e) => props.onChange(Number((e.currentTarget as HTMLInputElement).value))}
      />
      <input
        type="number"
        min={0}
        max={100}
        value={props.value}
        aria-label={`${props.label} percent`}
        data-testid={id}
        onInput={(e) => {
          const v = Number((e.currentTarget as HTMLInputElement).value);
          if (Number.isFinite(v) && v >= 0 && v <= 100) props.onChange(Math.round(v));
        }}
      />
      <span class={`num delta ${delta ? (delta < 0 ? 'bad-text' : 'ok-text') : 'dim'}`}>
        {delta ? formatPoints(delta) : 'current'}
      </span>
    </label>
  );
}

const CHIPS = 12;

function AllowedNodes(props: { value: string[]; names: string[]; onChange: (v: string[]) => void }) {
  const [text, setText] = useState('');
  const [all, setAll] = useState(false);
  const shown = all ? props.value : props.value.slice(0, CHIPS);
  const add = () => {
    const names = text
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter((s) => s && !props.value.includes(s));
    if (names.length) props.onChange([...props.value, ...names]);
    setText('');
  };
  return (
    <div class="allowed full">
      <span>allowedNodes</span>
      <div class="chips">
        {props.value.length === 0 ? <span class="dim">every node</span> : null}
        {shown.map((n) => (
          <span class="chip" key={n}>
            {n}
            <button
              type="button"
              class="chip-x"
              aria-label={`remove ${n}`}
              onClick={() => props.onChange(props.value.filter((x) => x !== n))}
            >
              ×
            </button>
          </span>
        ))}
        {props.value.length > CHIPS ? (
          <button type="button" class="link" onClick={() => setAll(!all)}>
            {all ? 'fewer' : `+${props.value.length - CHIPS} more`}
          </button>
        ) : null}
        <input
          list="whatif-node-names"
          value={text}
          placeholder="add node…"
          aria-label="Add a node to allowedNodes"
          data-testid="whatif-add-node"
          onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              add();
            }
          }}
          onBlur={add}
        />
        {props.value.length ? (
          <button type="button" class="link" onClick={() => props.onChange([])}>
            clear (every node)
          </button>
        ) : null}
      </div>
      <datalist id="whatif-node-names">
        {props.names.slice(0, 2000).map((n) => (
          <option key={n} value={n} />
        ))}
      </datalist>
    </div>
  );
}

function SimulationView(props: { sim: Simulation }) {
  const { sim } = props;
  const before = sim.eligibleBefore;
  const delta = before === null ? undefined : sim.eligibleAfter - before;
  const nothing =
    delta === 0 &&
    sim.nodesBecomingEligible.length === 0 &&
    sim.nodesBecomingIneligible.length === 0 &&
    sim.pendingPodsBecomingSchedulable.length === 0 &&
    sim.pendingPodsBecomingUnschedulable.length === 0 &&
    sim.runningPodsBreaching.length === 0;
  return (
    <div class="sim" data-testid="whatif-result">
      <p class="sim-head">
        eligible nodes{' '}
        <strong class="num sim-count">
          {before ?? '–'} → {sim.eligibleAfter}
        </strong>{' '}
        {delta ? <Badge tone={delta < 0 ? 'bad' : 'ok'}>{delta > 0 ? `+${delta}` : delta}</Badge> : null}
        {nothing ? <span class="dim"> · nothing would change</span> : null}
      </p>
      <SimList
        title="become ineligible"
        tone="bad"
        items={sim.nodesBecomingIneligible.map((n) => [n.node, n.reasons.join('; ')])}
      />
      <SimList title="become eligible" tone="ok" items={sim.nodesBecomingEligible.map((n) => [n, ''])} />
      <SimList
        title="pending pods that would schedule"
        tone="ok"
        items={sim.pendingPodsBecomingSchedulable.map((p) => [
          `${p.namespace}/${p.pod}`,
          p.node ? `→ ${p.node}` : '',
        ])}
      />
      <SimList
        title="pending pods that would stay stuck"
        tone="bad"
        items={sim.pendingPodsBecomingUnschedulable.map((p) => [`${p.namespace}/${p.pod}`, p.message ?? ''])}
      />
      <SimList
        title="running pods that would be over the rule"
        tone="warn"
        items={sim.runningPodsBreaching.map((p) => [
          `${p.namespace}/${p.pod} on ${p.node}`,
          p.reasons.join('; '),
        ])}
      />
    </div>
  );
}

const LIST_LIMIT = 8;

function SimList(props: { title: string; tone: 'ok' | 'bad' | 'warn'; items: [string, string][] }) {
  const [all, setAll] = useState(false);
  if (props.items.length === 0) return null;
  const items = all ? props.items : props.items.slice(0, LIST_LIMIT);
  return (
    <div class="sim-list">
      <h3>
        <span class={`${props.tone}-text`}>{props.items.length}</span> {props.title}
      </h3>
      <ul>
        {items.map(([main, detail]) => (
          <li key={main}>
            <code>{main}</code> <span class="dim">{detail}</span>
          </li>
        ))}
      </ul>
      {props.items.length > LIST_LIMIT ? (
        <button type="button" class="link" onClick={() => setAll(!all)}>
          {all ? 'show fewer' : `show all ${props.items.length}`}
        </button>
      ) : null}
    </div>
  );
}
