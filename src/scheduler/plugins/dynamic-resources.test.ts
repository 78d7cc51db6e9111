import { describe, expect, it } from 'vitest';
import { dynamicResources, ERR_RESOURCE_CLAIMS } from './dynamic-resources.js';
import { specNode, specPod, verdictOn } from './plugin.testing.js';

describe('DynamicResources (nodeload refuses what it cannot allocate)', () => {
  it.each([
    { name: 'a pod without claims is not this plugin’s business', spec: {}, reasons: [] },
    { name: 'an empty resourceClaims list', spec: { resourceClaims: [] }, reasons: [] },
    {
      name: 'a pod with a ResourceClaim fits no node, unresolvably',
      spec: { resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }] },
      reasons: [ERR_RESOURCE_CLAIMS],
    },
  ])('$name', ({ spec, reasons }) => {
    const v = verdictOn(dynamicResources(), specPod('p', spec), specNode('n'));
    expect(v.reasons.map((r) => r.reason)).toEqual(reasons);
    expect(v.feasible).toBe(reasons.length === 0);
    if (reasons.length) expect(v.reasons[0]?.unresolvable).toBe(true);
  });
});
