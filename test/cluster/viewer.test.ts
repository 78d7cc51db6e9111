import { describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../../src/server/access.js';
import { shippedViewerRoles, VIEWER_ROLE } from './viewer.js';

const role = (name: string) => shippedViewerRoles().find((r) => r.metadata?.name === name);

/** Whether one of the rules grants the permission cluster-wide, as RBAC matches it. */
function grants(rules: NonNullable<ReturnType<typeof role>>['rules'], p: Permission): boolean {
  return (rules ?? []).some((r) =>
    p.kind === 'nonResource'
      ? r.nonResourceURLs?.includes(p.path) && r.verbs.includes(p.verb)
      : r.apiGroups?.includes(p.group) && r.resources?.includes(p.resource) && r.verbs.includes(p.verb),
  );
}

describe('manifests/viewer: the roles for the user port', () => {
  const viewer = role(VIEWER_ROLE);

  it.each(Object.entries(PERMISSIONS).filter(([key]) => key !== 'metrics'))(
    'nodeload:viewer grants what the user port checks for %s',
    (_key, p) => {
      expect(grants(viewer?.rules, p)).toBe(true);
    },
  );

  it('nodeload:viewer grants nothing else: only reading, only what the port checks, not /metrics', () => {
    const checked = Object.values(PERMISSIONS);
    for (const r of viewer?.rules ?? []) {
      expect(
        r.verbs.every((v) => ['get', 'list', 'watch'].includes(v)),
        JSON.stringify(r),
      ).toBe(true);
      for (const resource of r.resources ?? []) {
        expect(checked.some((p) => p.kind === 'resource' && p.resource === resource)).toBe(true);
      }
      expect(r.resourceNames).toBeUndefined();
    }
    expect(grants(viewer?.rules, PERMISSIONS.metrics)).toBe(false);
    // Not aggregated: `view` would then grant nodes and the scheduler's status to every holder.
    expect(Object.keys(viewer?.metadata?.labels ?? {}).some((l) => l.includes('aggregate-to'))).toBe(false);
  });

  it('nodeload:nodeloadrules-reader reads rules only, and is aggregated into view, edit and admin', () => {
    const reader = role('nodeload:nodeloadrules-reader');
    expect(reader?.rules).toEqual([
      { apiGroups: ['example.com'], resources: ['nodeloadrules'], verbs: ['get', 'list', 'watch'] },
    ]);
    for (const to of ['view', 'edit', 'admin']) {
      expect(reader?.metadata?.labels?.[`rbac.authorization.k8s.io/aggregate-to-${to}`]).toBe('true');
    }
  });
});
