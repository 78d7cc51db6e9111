/** Pods waiting for this scheduler, with the queue they sit in and the last reason they failed. */
import { formatAge } from './format.js';
import type { DashboardState } from './live.js';
import type { QueueName } from './operations.js';
import { Badge, Empty, Panel } from './ui.js';

const QUEUE: Record<QueueName, { text: string; tone: 'info' | 'warn' | 'bad' | 'muted' }> = {
  ACTIVE: { text: 'queued', tone: 'info' },
  IN_FLIGHT: { text: 'scheduling', tone: 'info' },
  BACKOFF: { text: 'backoff', tone: 'warn' },
  UNSCHEDULABLE: { text: 'unschedulable', tone: 'bad' },
};

export function PendingPanel(props: { state: DashboardState }) {
  const { pending, loaded, errors, now, status } = props.state;
  return (
    <Panel
      id="pending"
      title="Pending pods"
      class="pending-panel"
      error={errors.pending}
      subtitle={<span class={pending.length ? 'warn-text' : 'dim'}>{pending.length} waiting</span>}
    >
      {!loaded.pending ? (
        <Empty>Loading…</Empty>
      ) : pending.length === 0 ? (
        <Empty>Nothing waiting: every pod for {status?.schedulerName ?? 'this scheduler'} is placed.</Empty>
      ) : (
        <table class="grid pending" data-testid="pending">
          <thead>
            <tr>
              <th scope="col">Pod</th>
              <th scope="col">Queue</th>
              <th scope="col" title="Attempts so far">
                #
              </th>
              <th scope="col">Waiting</th>
              <th scope="col">Last reason</th>
            </tr>
          </thead>
          <tbody>
            {pending.map((p) => (
              <tr key={`${p.namespace}/${p.name}`}>
                <td class="c-name" title={`${p.namespace}/${p.name}`}>
                  <span class="dim">{p.namespace}/</span>
                  {p.name}
                </td>
                <td>
                  <Badge tone={QUEUE[p.queue].tone}>{QUEUE[p.queue].text}</Badge>
                </td>
                <td class="num">{p.attempts}</td>
                <td class="num">{formatAge(p.since, now)}</td>
                <td class="reason-cell" title={p.reason ?? ''}>
                  <div class="clamp">{p.reason ?? <span class="dim">not tried yet</span>}</div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}
