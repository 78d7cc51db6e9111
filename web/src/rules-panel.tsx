/** NodeLoadRules: thresholds, node set, eligible and ineligible nodes with the reasons. */
import { useState } from 'preact/hooks';
import { formatAge, formatPoints } from './format.js';
import type { DashboardState } from './live.js';
import { groupIneligible, ruleKey } from './model.js';
import type { RuleView, Selector } from './operations.js';
import { Badge, Empty, Panel } from './ui.js';
import { ui } from './ui-state.js';

const SHOWN = 8;

function selectorText(s: Selector | null): string | undefined {
  if (!s) return undefined;
  const parts = [
    ...s.matchLabels.map((l) => `${l.key}=${l.value}`),
    ...s.matchExpressions.map(
      (e) => `${e.key} ${e.operator}${e.values.length ? ` (${e.values.join(', ')})` : ''}`,
    ),
  ];
  return parts.length ? parts.join(', ') : 'everything';
}

export function RulesPanel(props: { state: DashboardState }) {
  const { rules, loaded, errors, now } = props.state;
  return (
    <Panel
      id="rules"
      title="Rules"
      class="rules-panel"
      error={errors.rules}
      subtitle={<span class="dim">{rules.length} NodeLoadRules</span>}
    >
      {!loaded.rules ? (
        <Empty>Loading rules…</Empty>
      ) : rules.length === 0 ? (
        <Empty>
          No NodeLoadRule yet. Every pod is placed on the least-loaded feasible node; a rule adds thresholds
          and a node set for the pods it selects.
        </Empty>
      ) : (
        <ul class="rules" data-testid="rules">
          {rules.map((r) => (
            <RuleCard key={ruleKey(r)} rule={r} now={now} />
          ))}
        </ul>
      )}
    </Panel>
  );
}

function RuleCard(props: { rule: RuleView; now: number }) {
  const { rule } = props;
  const [open, setOpen] = useState(false);
  const eligible = rule.evaluation.eligible.length;
  const ineligible = rule.evaluation.ineligible.length;
  const total = eligible + ineligible;
  const ready = rule.status?.conditions.find((c) => c.type === 'Ready');
  // Nodes judged without measured usage (the MetricsAvailable condition): worth a glance, not an alarm.
  const metrics = rule.status?.conditions.find((c) => c.type === 'MetricsAvailable');
  const nodeSel = selectorText(rule.spec.nodeSelector);
  const podSel = selectorText(rule.spec.podSelector);
  const groups = groupIneligible(rule);
  const loadBlocked = rule.evaluation.ineligible.filter((v) => v.allowed).length;
  return (
    <li class="rule" data-rule={ruleKey(rule)}>
      <div class="rule-head">
        <button type="button" class="link rule-name" aria-expanded={open} onClick={() => setOpen(!open)}>
          <span class="chev">{open ? '▾' : '▸'}</span>
          <span class="dim">{rule.namespace}/</span>
          <strong>{rule.name}</strong>
        </button>
        {ready ? (
          <Badge
            tone={ready.status === 'True' ? 'ok' : ready.status === 'False' ? 'bad' : 'muted'}
            title={ready.message}
          >
            {ready.status === 'True' ? 'Ready' : ready.reason || 'NotReady'}
          </Badge>
        ) : (
          <Badge tone="muted">no status yet</Badge>
        )}
        {metrics?.reason === 'MetricsMissing' ? (
          <Badge tone="warn" title={metrics.message}>
            metrics missing
          </Badge>
        ) : metrics?.reason === 'MetricsNotServed' ? (
          <Badge tone="muted" title={metrics.message}>
            by requests
          </Badge>
        ) : null}
        <span class="spacer" />
        <button
          type="button"
          class="btn small"
          onClick={() => {
            ui.set({ whatIfRule: ruleKey(rule) });
            document.getElementById('whatif')?.scrollIntoView({ behavior: 'smooth', block: 'nearest' });
          }}
        >
          what if…
        </button>
      </div>
      <div class="rule-spec">
        <span>
          cpu ≤ <strong>{rule.spec.maxCPU}%</strong>
        </span>
        <span>
          mem ≤ <strong>{rule.spec.maxMemory}%</strong>
        </span>
        <span class="dim" title={rule.spec.allowedNodes.join(', ')}>
          {rule.spec.allowedNodes.length ? `${rule.spec.allowedNodes.length} allowed nodes` : 'all nodes'}
          {nodeSel ? ` ∩ ${nodeSel}` : ''}
        </span>
        {podSel ? <span class="dim">pods: {podSel}</span> : null}
        {rule.spec.burst ? (
          <span class="dim">
            ≤ {rule.spec.burst.maxPlacements}/{rule.spec.burst.windowSeconds}s per node
          </span>
        ) : null}
      </div>
      <div
        class="rule-bar"
        title={`${eligible} eligible, ${loadBlocked} over thresholds, ${ineligible - loadBlocked} outside the node set`}
      >
        <span class="seg ok" style={{ flexGrow: eligible }} />
        <span class="seg bad" style={{ flexGrow: loadBlocked }} />
        <span class="seg out" style={{ flexGrow: total ? ineligible - loadBlocked : 1 }} />
      </div>
      <div class="rule-counts">
        <span>
          <strong class="ok-text num">{eligible}</strong> eligible
        </span>
        <span>
          <strong class={`num ${loadBlocked ? 'bad-text' : 'dim'}`}>{loadBlocked}</strong> over thresholds
        </span>
        <span class="dim">
          <strong class="num">{ineligible - loadBlocked}</strong> outside node set
        </span>
        <span class="spacer" />
        <span class="dim">
          evaluated {formatAge(rule.evaluation.evaluatedAt ?? rule.status?.lastEvaluationTime, props.now)} ago
        </span>
      </div>
      {open ? (
        <div class="rule-detail">
          {eligible ? (
            <>
              <h3>Eligible, most headroom first</h3>
              <ul class="node-list">
                {rule.evaluation.eligible.slice(0, SHOWN).map((v) => (
                  <li key={v.node}>
                    <NodeLink name={v.node} /> <span class="ok-text num">{formatPoints(v.headroom)}</span>
                  </li>
                ))}
                {eligible > SHOWN ? <li class="dim">and {eligible - SHOWN} more</li> : null}
              </ul>
            </>
          ) : (
            <p class="bad-text">No node is eligible: pods covered by this rule cannot be placed.</p>
          )}
          {groups.map(([code, list]) => (
            <div key={code}>
              <h3>
                {code} <span class="dim">× {list.length}</span>
              </h3>
              <ul class="node-list">
                {list.slice(0, SHOWN).map((v) => (
                  <li key={v.node}>
                    <NodeLink name={v.node} />{' '}
                    <span class="dim">{v.reasons.map((r) => r.message).join('; ')}</span>
                  </li>
                ))}
                {list.length > SHOWN ? <li class="dim">and {list.length - SHOWN} more</li> : null}
              </ul>
            </div>
          ))}
        </div>
      ) : null}
    </li>
  );
}

function NodeLink(props: { name: string }) {
  return (
    <button
      type="button"
      class="link node-link"
      onClick={() => {
        ui.set({ selectedNode: props.name });
        document.getElementById('nodes')?.scrollIntoView({ behavior: 'smooth', block: 'start' });
      }}
    >
      {props.name}
    </button>
  );
}
