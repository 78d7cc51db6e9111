/**
 * The operator's Events, written as series the way client-go's events recorder (tools/events) writes
 * them: an Event that repeats — same rule, same reason, same node — within SERIES_WINDOW_MS of its last
 * occurrence bumps `series.count` and `series.lastObservedTime` on the Event already written instead of
 * creating another. A node whose load hovers around a threshold, flapping between eligible and not, is
 * then one NodeIneligible and one NodeEligible Event with counts ("x12 over 20m" in kubectl), not two
 * objects per flap.
 *
 * client-go keys a series on the note too; here the note carries the load figures of the moment, which
 * differ on every flap, so the key leaves them out. The API server refuses a change of an Event's note,
 * so a series keeps the figures of its first occurrence: the rule's status has the current ones.
 */
import { Counter, type Registry } from 'prom-client';
import { EventSeries } from '../cluster/event-series.js';
import { ruleKey } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { Logger } from '../server/log.js';
import { errorText, httpCode, type RuleWriter } from './kube.js';
import { eventBody, microTime, type RuleEventSpec } from './plan.js';

/** The series an Event belongs to: rule, reason and node (none for an Event naming several). */
export function seriesKey(rule: Pick<NodeLoadRule, 'namespace' | 'name'>, spec: RuleEventSpec): string {
  return `${ruleKey(rule)}\u0000${spec.reason}\u0000${spec.node ?? ''}`;
}

export interface RuleEventRecorderOptions {
  writer: RuleWriter;
  /** reportingInstance of the Events. */
  identity: string;
  log: Logger;
  registry: Registry;
}

/** Writes a rule's Events: new ones created, repeats counted on their series. Best effort, like client-go's. */
export class RuleEventRecorder {
  private readonly series = new EventSeries();
  private readonly written: Counter<'reason' | 'write'>;
  private seq = 0;

  constructor(private readonly opts: RuleEventRecorderOptions) {
    this.written = new Counter({
      name: 'nodeload_operator_events_total',
      help: 'Events the operator wrote about rules, by reason and write (create: a new Event; series: a repeat counted on an Event already written).',
      labelNames: ['reason', 'write'],
      registers: [opts.registry],
    });
  }

  async record(rule: NodeLoadRule, spec: RuleEventSpec, now: number): Promise<void> {
    const key = seriesKey(rule, spec);
    const repeat = this.series.repeat(key, now);
    if (repeat) {
      try {
        await this.opts.writer.patchEventSeries(rule.namespace, repeat.name, {
          count: repeat.count,
          lastObservedTime: microTime(now),
        });
        this.written.inc({ reason: spec.reason, write: 'series' });
        return;
      } catch (err) {
        if (httpCode(err) !== 404) {
          this.warn(rule, spec, err);
          return;
        }
        // The Event expired (the API server's TTL) or was deleted: this occurrence starts a new one.
        this.series.forget(key, repeat.name);
      }
    }
    const body = eventBody(rule, spec, this.opts.identity, now, this.seq++);
    try {
      await this.opts.writer.createEvent(body);
      this.series.started(key, body.metadata.name, now);
      this.written.inc({ reason: spec.reason, write: 'create' });
    } catch (err) {
      this.warn(rule, spec, err);
    }
  }

  private warn(rule: NodeLoadRule, spec: RuleEventSpec, err: unknown): void {
    // Events are best effort (client-go's recorder drops them too); the status already tells the story.
    this.opts.log.warn(
      { err: errorText(err), rule: ruleKey(rule), reason: spec.reason, node: spec.node },
      'could not emit Event',
    );
  }
}
