import { describe, expect, it } from 'vitest';
import {
  describePermission,
  filterReadable,
  mayRead,
  mayReadNow,
  PERMISSIONS,
  permissionAttributes,
  requirePermission,
  UNRESTRICTED_ACCESS,
} from './access.js';
import { fakeUserPortAuth } from './testing.js';

const gate = fakeUserPortAuth({
  users: {
    'tok-admin': { name: 'admin', can: ['list pods', 'list nodes', 'get /metrics'] },
    'tok-shop': { name: 'shop-dev', can: ['list pods in shop', 'list nodeloadrules.example.com in shop'] },
  },
});

describe('describePermission', () => {
  it.each([
    [PERMISSIONS.listPods, 'shop', 'pods list in shop'],
    [PERMISSIONS.listPods, undefined, 'pods list in all namespaces'],
    [PERMISSIONS.listRules, 'shop', 'nodeloadrules.example.com list in shop'],
    [PERMISSIONS.getRules, 'shop', 'nodeloadrules.example.com get in shop'],
    [PERMISSIONS.listNodes, 'shop', 'nodes list'],
    [PERMISSIONS.metrics, undefined, 'get /metrics'],
  ])('%j in %s → %s', (p, namespace, want) => {
    expect(describePermission(p, namespace)).toBe(want);
  });

  it('asks cluster-scoped resources without a namespace and namespaced ones in it', () => {
    expect(permissionAttributes(PERMISSIONS.listNodes, 'shop')).toEqual({
      kind: 'resource',
      verb: 'list',
      group: '',
      version: 'v1',
      resource: 'nodes',
    });
    expect(permissionAttributes(PERMISSIONS.listPods, 'shop')).toMatchObject({ namespace: 'shop' });
    expect(permissionAttributes(PERMISSIONS.metrics)).toEqual({
      kind: 'nonResource',
      verb: 'get',
      path: '/metrics',
    });
  });
});

describe('filterReadable', () => {
  const pods = [
    { namespace: 'shop', name: 'a' },
    { namespace: 'ops', name: 'b' },
    { namespace: 'shop', name: 'c' },
    { namespace: 'kube-system', name: 'd' },
  ];

  it('keeps everything for a cluster-wide grant, asking once', async () => {
    const before = gate.accessReviews.length;
    const r = await filterReadable(
      gate.accessOf('tok-admin'),
      PERMISSIONS.listPods,
      pods,
      (p) => p.namespace,
    );
    expect(r).toEqual({ items: pods, omitted: [] });
    expect(gate.accessReviews.length - before).toBe(1);
  });

  it('keeps the namespaces a namespaced grant covers and names the others, one review per namespace', async () => {
    const shop = gate.accessOf('tok-shop');
    const before = gate.accessReviews.length;
    const r = await filterReadable(shop, PERMISSIONS.listPods, pods, (p) => p.namespace);
    expect(r.items.map((p) => p.name)).toEqual(['a', 'c']);
    expect(r.omitted).toEqual(['kube-system', 'ops']);
    // all namespaces, then shop, ops, kube-system
    expect(gate.accessReviews.length - before).toBe(4);
    expect(mayReadNow(shop, PERMISSIONS.listPods, 'shop')).toBe(true);
    expect(mayReadNow(shop, PERMISSIONS.listPods, 'ops')).toBe(false);
    expect(mayReadNow(shop, PERMISSIONS.listPods, 'never-asked')).toBeUndefined();
    expect(await mayRead(shop, PERMISSIONS.listPods, 'never-asked')).toBe(false);
  });

  it('lets the unrestricted loopback user read everything', async () => {
    expect(
      (await filterReadable(UNRESTRICTED_ACCESS, PERMISSIONS.listPods, pods, (p) => p.namespace)).items,
    ).toEqual(pods);
  });
});

describe('requirePermission', () => {
  it('throws a ForbiddenError naming the user and the permission', async () => {
    await expect(requirePermission(gate.accessOf('tok-shop'), PERMISSIONS.listNodes)).rejects.toMatchObject({
      name: 'ForbiddenError',
      permission: 'nodes list',
      message: 'forbidden: user "shop-dev" lacks nodes list',
    });
    await expect(requirePermission(gate.accessOf('tok-admin'), PERMISSIONS.metrics)).resolves.toBeUndefined();
  });
});
