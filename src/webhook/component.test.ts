import { describe, expect, it } from 'vitest';
import type { ClusterTopics, ClusterView, RuleEntry } from '../cluster/view.js';
import { EventBus } from '../events/bus.js';
import { toRule } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import { admitMutation } from './admit.js';
import { cacheState } from './component.js';
import { podRequest } from './testing.js';

const OPTS = {
  schedulerName: 'nodeload-scheduler',
  overrideExplicitScheduler: false,
  excludedNamespaces: new Set<string>(),
};

function entry(allowedNodes: string[]): RuleEntry<NodeLoadRule> {
  const raw = { metadata: { namespace: 'team', name: 'pool', resourceVersion: String(allowedNodes) } };
  return { rule: toRule({ ...raw, spec: { allowedNodes } }), raw };
}

const pinnedNodes = (uid: string, state: ReturnType<typeof cacheState>) => {
  const patch =
    admitMutation(podRequest(uid, { metadata: { name: 'p' }, spec: { containers: [] } }), state, OPTS).review
      .response.patch ?? '';
  return [
    ...Buffer.from(patch, 'base64')
      .toString()
      .matchAll(/"values":\["([^"]+)"\]/g),
  ].map((m) => m[1]);
};

describe('cacheState', () => {
  it('a rule change empties the patch memo: the next pod gets the new rule’s nodes', () => {
    const bus = new EventBus<ClusterTopics<NodeLoadRule>>();
    const rules = new Map([['team/pool', entry(['n1'])]]);
    const cache = { bus, rules, nodes: new Map(), namespaces: new Map(), isReady: () => true };
    const state = cacheState(cache as unknown as ClusterView<NodeLoadRule>);

    expect(pinnedNodes('a', state)).toEqual(['n1']);
    expect(pinnedNodes('b', state)).toEqual(['n1']);
    expect(state.patchMemo?.hits).toBe(1);

    const old = rules.get('team/pool') as RuleEntry<NodeLoadRule>;
    rules.set('team/pool', entry(['n2']));
    bus.emit('rule', { type: 'update', old, new: rules.get('team/pool') as RuleEntry<NodeLoadRule> });
    expect(pinnedNodes('c', state)).toEqual(['n2']);

    // Stopped: no longer listening (the gateway is going away; nothing may keep it alive).
    state.stop();
    expect(bus.listenerCount('rule')).toBe(0);
  });
});
