/** Small presentational pieces shared by the panels. */
import type { ComponentChildren } from 'preact';
import { formatPercent } from './format.js';
import type { StreamState } from './graphql.js';
import { heatColour, ratio } from './model.js';

export function Panel(props: {
  title: string;
  id: string;
  actions?: ComponentChildren;
  subtitle?: ComponentChildren;
  error?: string | undefined;
  class?: string;
  children: ComponentChildren;
}) {
  return (
    <section class={`panel ${props.class ?? ''}`} id={props.id} aria-labelledby={`${props.id}-title`}>
      <header class="panel-head">
        <h2 id={`${props.id}-title`}>{props.title}</h2>
        {props.subtitle ? <span class="panel-sub">{props.subtitle}</span> : null}
        <span class="spacer" />
        {props.actions}
      </header>
      {props.error ? (
        <p class="panel-error" role="status">
          Could not refresh: {props.error} — retrying.
        </p>
      ) : null}
      <div class="panel-body">{props.children}</div>
    </section>
  );
}

export function Badge(props: {
  tone: 'ok' | 'warn' | 'bad' | 'info' | 'muted';
  children: ComponentChildren;
  title?: string;
}) {
  return (
    <span class={`badge ${props.tone}`} title={props.title}>
      {props.children}
    </span>
  );
}

/**
 * A horizontal load bar against a threshold: the fill is coloured by load ÷ threshold, the tick marks
 * the threshold, and an optional lighter segment shows the load after a placement.
 */
export function LoadBar(props: {
  value: number;
  threshold: number;
  after?: number;
  label?: string;
  wide?: boolean;
}) {
  const clamp = (x: number) => Math.max(0, Math.min(100, x));
  const colour = heatColour(ratio(props.after ?? props.value, props.threshold));
  const after = props.after;
  return (
    <span class={`loadbar ${props.wide ? 'wide' : ''}`} title={props.label}>
      <span class="track">
        <span class="fill" style={{ width: `${clamp(props.value)}%`, backgroundColor: colour }} />
        {after !== undefined && after > props.value ? (
          <span
            class="fill after"
            style={{
              left: `${clamp(props.value)}%`,
              width: `${clamp(after) - clamp(props.value)}%`,
              backgroundColor: colour,
            }}
          />
        ) : null}
        {props.threshold < 100 ? <span class="tick" style={{ left: `${clamp(props.threshold)}%` }} /> : null}
      </span>
      <span class="num">
        {formatPercent(props.value)}
        {after !== undefined ? <span class="dim"> → {formatPercent(after)}</span> : null}
      </span>
    </span>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

const LIVE_TEXT: Record<StreamState, string> = {
  live: 'live',
  connecting: 'connecting',
  retrying: 'reconnecting',
  'signed-out': 'signed out',
};

export function LiveDot(props: { state: StreamState; label: string }) {
  const text = LIVE_TEXT[props.state];
  return (
    <span class={`live ${props.state}`} title={`${props.label}: ${text}`}>
      <span class="dot" />
      {props.label}
    </span>
  );
}
