/** The Pod type: the few fields views need, straight from the cache's PodInfo. */
import type { PodInfo } from '../cluster/model.js';
import { builder } from './builder.js';
import { KeyValueRef, keyValues, ResourcesRef } from './common.js';

export const PodRef = builder.objectRef<PodInfo>('Pod').implement({
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    name: t.exposeString('name'),
    uid: t.exposeString('uid'),
    nodeName: t.string({
      nullable: true,
      description: 'Null while unbound.',
      resolve: (p) => p.nodeName || null,
    }),
    schedulerName: t.exposeString('schedulerName'),
    phase: t.exposeString('phase'),
    priority: t.exposeInt('priority'),
    requests: t.field({ type: ResourcesRef, resolve: (p) => p.requests }),
    labels: t.field({ type: [KeyValueRef], resolve: (p) => keyValues(p.labels) }),
    owner: t.string({
      nullable: true,
      description: 'Kind/name of the controlling owner, e.g. "ReplicaSet/web-5d9c".',
      resolve: (p) => (p.ownerKind ? `${p.ownerKind}/${p.ownerName}` : null),
    }),
    creationTimestamp: t.field({ type: 'DateTime', resolve: (p) => p.creationTimestamp }),
    scheduledAt: t.field({ type: 'DateTime', nullable: true, resolve: (p) => p.scheduledAt ?? null }),
  }),
});
