/** The top bar: what the cluster looks like right now, in a handful of numbers. */
import { useEffect, useMemo } from 'preact/hooks';
import { storedToken } from './auth.js';
import { formatPercent } from './format.js';
import { type DashboardState, trendSample } from './live.js';
import { LiveDot } from './ui.js';

export function Header(props: { state: DashboardState }) {
  const { nodes, rules, pending, status, statusRefused, decisions, now } = props.state;
  const statusError = props.state.errors.status;
  const sample = useMemo(() => trendSample(nodes.values(), rules), [nodes, rules]);
  let ready = 0;
  for (const n of nodes.values()) if (n.ready) ready++;
  const perMinute = decisions.filter((d) => now - Date.parse(d.time) < 60_000).length;
  const offline =
    props.state.decisionStream === 'retrying'
      ? 'offline'
      : props.state.decisionStream === 'signed-out'
        ? 'signed out'
        : '';
  // The tab title carries what needs attention, for a dashboard left open in a background tab.
  useEffect(() => {
    const parts = [
      offline,
      pending.length ? `${pending.length} pending` : '',
      sample.over ? `${sample.over} over` : '',
    ];
    const status = parts.filter(Boolean).join(' · ');
    document.title = status ? `${status} — nodeload` : 'nodeload';
  }, [offline, pending.length, sample.over]);
  return (
    <header class="topbar">
      <div class="brand">
        <span class="logo" aria-hidden="true">
          <i />
          <i />
          <i />
          <i />
        </span>
        <h1>nodeload</h1>
        {status ? (
          <span class="sched" data-testid="scheduler-status" title={`identity ${status.identity}`}>
            <span class={`dot ${status.leader ? 'ok' : 'warn'}`} />
            {status.schedulerName} · {status.leader ? 'leader' : 'standby'}
            {!status.cacheSynced ? ' · syncing' : ''}
          </span>
        ) : statusRefused !== undefined ? (
          <span
            class="sched"
            data-testid="scheduler-status"
            title={`Your token lacks ${statusRefused}; pods, rules and decisions you may read are still shown.`}
          >
            <span class="dot" />
            scheduler status: not permitted
          </span>
        ) : statusError ? (
          <span class="sched" data-testid="scheduler-status" title={statusError}>
            <span class="dot warn" />
            scheduler status: unavailable
          </span>
        ) : null}
      </div>
      <dl class="kpis">
        <Kpi label="nodes" value={String(nodes.size)} sub={`${ready} ready`} testid="kpi-nodes" />
        <Kpi
          label="cpu avg"
          value={formatPercent(sample.cpuAvg)}
          sub={`p90 ${formatPercent(sample.cpuP90)}`}
        />
        <Kpi
          label="mem avg"
          value={formatPercent(sample.memAvg)}
          sub={`p90 ${formatPercent(sample.memP90)}`}
        />
        <Kpi
          label="over threshold"
          value={String(sample.over)}
          tone={sample.over ? 'bad' : undefined}
          sub="nodes"
        />
        <Kpi
          label="pending"
          value={String(pending.length)}
          tone={pending.length ? 'warn' : undefined}
          sub="pods"
        />
        <Kpi
          label="decisions"
          value={`${perMinute}/min`}
          sub={status ? `${status.bound} bound · ${status.unschedulable} unsched.` : ''}
        />
      </dl>
      <div class="streams">
        <LiveDot state={props.state.decisionStream} label="decisions" />
        <LiveDot state={props.state.loadStream} label="load" />
        <a href={graphiqlHref()} class="link" target="_blank" rel="noreferrer">
          GraphiQL ↗
        </a>
      </div>
    </header>
  );
}

/** GraphiQL in a new tab, which has its own session storage: the token travels in the fragment. */
function graphiqlHref(): string {
  const token = storedToken();
  return token ? `graphql#token=${encodeURIComponent(token)}` : 'graphql';
}

function Kpi(props: {
  label: string;
  value: string;
  sub?: string;
  tone?: 'bad' | 'warn' | undefined;
  testid?: string;
}) {
  return (
    <div class="kpi" data-testid={props.testid}>
      <dt>{props.label}</dt>
      <dd class={props.tone ? `${props.tone}-text` : ''}>
        <span class="num kpi-value">{props.value}</span>
        {props.sub ? <small>{props.sub}</small> : null}
      </dd>
    </div>
  );
}
