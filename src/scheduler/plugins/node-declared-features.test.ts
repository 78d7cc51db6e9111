import { describe, expect, it } from 'vitest';
import { nodeDeclaredFeatures } from './node-declared-features.js';
import { type Json, reasonsOf, specNode, specPod, verdictOn } from './plugin.testing.js';

const RESTART_ALL = 'RestartAllContainersOnContainerExits';
const USERNS_HOSTNET = 'UserNamespacesHostNetworkSupport';
const restartAll = { exitCodes: { operator: 'In', values: [42] }, action: 'RestartAllContainers' };
const withRules = (rules: Json[], where: 'containers' | 'initContainers' = 'containers') =>
  specPod('p', {
    containers: [{ name: 'app', ...(where === 'containers' ? { restartPolicyRules: rules } : {}) }],
    ...(where === 'initContainers'
      ? { initContainers: [{ name: 'side', restartPolicy: 'Always', restartPolicyRules: rules }] }
      : {}),
  });

describe('NodeDeclaredFeatures', () => {
  it.each<{ name: string; pod: Json; declared?: string[]; fails: boolean }>([
    { name: 'a pod needing nothing goes anywhere', pod: specPod('p'), fails: false },
    {
      name: 'RestartAllContainers on a node that does not declare it',
      pod: withRules([restartAll]),
      fails: true,
    },
    {
      name: 'RestartAllContainers on a node that declares it',
      pod: withRules([restartAll]),
      declared: [RESTART_ALL],
      fails: false,
    },
    {
      name: 'the rule on an init container counts too',
      pod: withRules([restartAll], 'initContainers'),
      declared: [USERNS_HOSTNET],
      fails: true,
    },
    {
      name: 'a restart rule of another action needs nothing',
      pod: withRules([{ ...restartAll, action: 'Restart' }]),
      fails: false,
    },
    {
      name: 'host network in a user namespace needs its feature',
      pod: specPod('p', { hostNetwork: true, hostUsers: false, containers: [{ name: 'app' }] }),
      declared: [RESTART_ALL],
      fails: true,
    },
    {
      name: 'host network with host users needs nothing',
      pod: specPod('p', { hostNetwork: true, hostUsers: true, containers: [{ name: 'app' }] }),
      fails: false,
    },
  ])('$name', ({ pod, declared, fails }) => {
    const v = verdictOn(
      nodeDeclaredFeatures(),
      pod,
      specNode('n', declared ? { declaredFeatures: declared } : {}),
    );
    expect(v.feasible).toBe(!fails);
    if (fails) {
      expect(reasonsOf(v)).toEqual(["node(s) didn't match Pod's required features"]);
      // Evicting pods cannot give a node a feature: preemption must not try.
      expect(v.reasons[0]?.unresolvable).toBe(true);
    }
  });

  it('says which feature the node lacks', () => {
    const v = verdictOn(nodeDeclaredFeatures(), withRules([restartAll]), specNode('n'));
    expect(v.reasons[0]?.detail).toContain(RESTART_ALL);
  });
});
