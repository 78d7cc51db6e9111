/**
 * VolumeZone (PreFilter + Filter), as upstream's volumezone plugin. PreFilter reads, for each
 * persistentVolumeClaim volume of the pod, the bound PV's topology labels
 *   failure-domain.beta.kubernetes.io/zone, …/region, topology.kubernetes.io/zone, …/region
 * (a value may list several zones joined by "__"). Claims not yet bound are skipped when their class
 * binds WaitForFirstConsumer (VolumeBinding places those); otherwise PreFilter fails the pod,
 * UnschedulableAndUnresolvable: `persistentvolumeclaim "x" not found`, "PersistentVolumeClaim had no pv
 * name and storageClass name", `storageclass.storage.k8s.io "x" not found`, "PersistentVolume had no name",
 * `persistentvolume "x" not found`. No topology labels at all → Filter is skipped.
 * Filter:
 *   a node without any of the four labels fits (single-zone clusters);
 *   else fails ⇔ ∃ PV label (k, values): node.labels[k] (or the GA key's value for a beta k) ∉ values
 *   → UnschedulableAndUnresolvable "node(s) had no available volume zone".
 */
import type { VolumeInfo } from '../../cluster/model.js';
import type { FilterPlugin, PreFilterPlugin, PreFilterResult } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { PLUGIN } from './names.js';
import {
  claimClass,
  claimKey,
  claimNotFound,
  type StorageView,
  WAIT_FOR_FIRST_CONSUMER,
} from './volume-common.js';

const STATE = 'VolumeZone/topologies';
export const ERR_VOLUME_ZONE_CONFLICT = 'node(s) had no available volume zone';

const BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
const BETA_REGION = 'failure-domain.beta.kubernetes.io/region';
const ZONE = 'topology.kubernetes.io/zone';
const REGION = 'topology.kubernetes.io/region';
const TOPOLOGY_LABELS = [BETA_ZONE, BETA_REGION, ZONE, REGION];

interface PvTopology {
  pv: string;
  key: string;
  values: ReadonlySet<string>;
}

function toGA(key: string): string {
  if (key === BETA_REGION) return REGION;
  if (key === BETA_ZONE) return ZONE;
  return key;
}

/** LabelZonesToSet: "a__b" → {a, b}; a label with an empty part is ignored (upstream logs and skips it). */
function zonesOf(value: string): Set<string> | undefined {
  const parts = value.split('__').map((p) => p.trim());
  return parts.some((p) => p === '') ? undefined : new Set(parts);
}

export function pvTopologies(pv: VolumeInfo): PvTopology[] {
  const out: PvTopology[] = [];
  for (const key of TOPOLOGY_LABELS) {
    const value = pv.labels[key];
    if (value === undefined) continue;
    const values = zonesOf(value);
    if (values) out.push({ pv: pv.name, key, values });
  }
  return out;
}

function fail(reason: string): PreFilterResult {
  return { reject: { code: 'VolumeZoneUnresolvable', reason, detail: reason, unresolvable: true } };
}

export function volumeZone(storage: StorageView): PreFilterPlugin & FilterPlugin {
  return {
    name: PLUGIN.VolumeZone,
    preFilter(state, ctx) {
      const pod = ctx.pod;
      const topologies: PvTopology[] = [];
      for (const v of pod.volumes) {
        if (v.claimName === undefined || v.ephemeral) continue;
        if (v.claimName === '') return fail('PersistentVolumeClaim had no name');
        const claim = storage.claims.get(claimKey(pod.namespace, v.claimName));
        if (!claim) return fail(claimNotFound(v.claimName));
        if (claim.volumeName === '') {
          const className = claimClass(claim);
          if (className === '') return fail('PersistentVolumeClaim had no pv name and storageClass name');
          const sc = storage.storageClasses.get(className);
          if (!sc) return fail(`storageclass.storage.k8s.io "${className}" not found`);
          if (sc.volumeBindingMode === WAIT_FOR_FIRST_CONSUMER) continue;
          return fail('PersistentVolume had no name');
        }
        const pv = storage.volumes.get(claim.volumeName);
        if (!pv) return fail(`persistentvolume "${claim.volumeName}" not found`);
        topologies.push(...pvTopologies(pv));
      }
      if (topologies.length === 0) return { skip: true };
      state.write(STATE, topologies);
      return undefined;
    },
    filter(state, _ctx, n, verdict) {
      const labels = n.node?.labels ?? {};
      if (!TOPOLOGY_LABELS.some((k) => Object.hasOwn(labels, k))) return;
      for (const t of state.read<PvTopology[]>(STATE) ?? []) {
        const v = Object.hasOwn(labels, t.key) ? labels[t.key] : labels[toGA(t.key)];
        if (v !== undefined && t.values.has(v)) continue;
        addReason(verdict, {
          plugin: PLUGIN.VolumeZone,
          code: 'VolumeZoneConflict',
          reason: ERR_VOLUME_ZONE_CONFLICT,
          detail: `PV ${t.pv} is in ${t.key}=${[...t.values].join('__')}, the node in ${v ?? '(none)'}`,
          unresolvable: true,
        });
        return;
      }
    },
  };
}
