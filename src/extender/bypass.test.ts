import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../cluster/model.js';
import { pod, rule } from '../scheduler/testing.js';
import { bypassedRules } from './bypass.js';

const WEB = rule('web', { podSelector: { matchLabels: { app: 'web' } } });
const pending = (f: { scheduler?: string; app?: string } = {}) =>
  pod('p', { labels: { app: f.app ?? 'web' }, schedulerName: f.scheduler ?? 'nodeload-scheduler' });
const bound = (p: PodInfo, node = 'n1'): PodInfo => ({ ...p, nodeName: node });

describe('bypassedRules', () => {
  const check = (boundHere = false, nativeSchedulerName?: string) => ({
    rules: () => [WEB],
    boundHere: () => boundHere,
    ...(nativeSchedulerName ? { nativeSchedulerName } : {}),
  });

  it.each<[string, { old?: PodInfo; new?: PodInfo }, ReturnType<typeof check>, string[]]>([
    ['a covered pod bound by someone else', { old: pending(), new: bound(pending()) }, check(), ['web']],
    ['a covered pod the extender bound', { old: pending(), new: bound(pending()) }, check(true), []],
    [
      'a pod no rule covers',
      { old: pending({ app: 'db' }), new: bound(pending({ app: 'db' })) },
      check(),
      [],
    ],
    [
      'a pod of the native loop',
      { old: pending(), new: bound(pending()) },
      check(false, 'nodeload-scheduler'),
      [],
    ],
    ['a pod seen bound at once (listed, or created pinned)', { new: bound(pending()) }, check(), []],
    ['an update of a pod already bound', { old: bound(pending()), new: bound(pending()) }, check(), []],
    ['a pod still pending', { old: pending(), new: pending() }, check(), []],
  ])('%s', (_name, change, c, rules) => {
    expect(bypassedRules(change, c).map((r) => r.name)).toEqual(rules);
  });
});
