/**
 * VolumeBinding (PreFilter, Filter, Reserve/Unreserve, PreBind), as upstream's volumebinding plugin;
 * its Score (VolumeCapacityPriority, off by default upstream) is not implemented.
 *
 * PreFilter, over the pod's persistentVolumeClaim and generic ephemeral volumes (none → skip), each
 * UnschedulableAndUnresolvable when it fails:
 *   a claim that does not exist        `persistentvolumeclaim "x" not found` (ephemeral: "waiting for
 *                                      ephemeral volume controller to create the persistentvolumeclaim")
 *   phase Lost / being deleted         `… bound to non-existent persistentvolume "y"` / `… is being deleted`
 *   unbound, not WaitForFirstConsumer  "pod has unbound immediate PersistentVolumeClaims" (the PV
 *                                      controller binds those; the claim's update requeues the pod)
 * Filter: findPodVolumes (volume-binding-match.ts) per node: bound claims' PV node affinity, static PVs
 * for the unbound WaitForFirstConsumer claims (smallest that fits), else dynamic provisioning.
 * Reserve assumes the node's bindings in the assume cache (PV.claimRef = claim; claim's selected-node =
 * node) so later cycles see them; Unreserve restores. PreBind writes them through the VolumeBinder and
 * waits up to bindTimeoutSeconds (default 600) for the PV controller / provisioner to bind every claim
 * (volume-binding-prebind.ts).
 */
import type { ClaimInfo, CsiStorageCapacityInfo, VolumeInfo } from '../../cluster/model.js';
import type {
  FilterPlugin,
  PreBindPlugin,
  PreFilterPlugin,
  PreFilterResult,
  ReservePlugin,
} from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import type { VolumeBinder } from '../volume-binder.js';
import { PLUGIN } from './names.js';
import { VolumeAssumeCache } from './volume-assume-cache.js';
import { type CapacityInput, findPodVolumes, type PodVolumes } from './volume-binding-match.js';
import { bindPodVolumes } from './volume-binding-prebind.js';
import {
  ANN_SELECTED_NODE,
  claimClass,
  claimKey,
  claimNotFound,
  claimVolumes,
  delayBinding,
  fullyBound,
  type StorageView,
} from './volume-common.js';

export interface VolumeBindingArgs {
  /** How long PreBind waits for the claims to be bound (VolumeBindingArgs.bindTimeoutSeconds, default 600). */
  bindTimeoutSeconds?: number;
}

export interface VolumeBindingDeps {
  storage: StorageView;
  /** The API writes; without one, a pod whose claims need binding fails PreBind. */
  binder?: VolumeBinder;
  /** Rollback errors after a failed PreBind (logged by the caller). */
  onRollbackError?: (err: unknown) => void;
}

export const ERR_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
const STATE = 'VolumeBinding/state';
const DEFAULT_BIND_TIMEOUT_SECONDS = 600;

interface Reserved {
  node: string;
  volumes: PodVolumes;
  pvKeys: string[];
  claimKeys: string[];
}

interface State {
  /** Fully bound claims. */
  bound: ClaimInfo[];
  /** Unbound claims of WaitForFirstConsumer classes, as the assume cache shows them. */
  unbound: ClaimInfo[];
  pvsByClass: Map<string, VolumeInfo[]>;
  /** CSIStorageCapacities of the unbound claims' classes, when some class's driver tracks capacity. */
  capacity?: CapacityInput;
  byNode: Map<string, PodVolumes>;
  allBound: boolean;
  reserved?: Reserved;
}

function unresolvable(code: string, reason: string, detail = reason): PreFilterResult {
  return { reject: { code, reason, detail, unresolvable: true } };
}

function validTimeout(args: VolumeBindingArgs): number {
  const t = args.bindTimeoutSeconds ?? DEFAULT_BIND_TIMEOUT_SECONDS;
  if (typeof t !== 'number' || !Number.isFinite(t) || t < 0)
    throw new Error(`VolumeBinding: bindTimeoutSeconds must be a number ≥ 0, got ${JSON.stringify(t)}`);
  return t;
}

export type VolumeBindingPlugin = PreFilterPlugin &
  FilterPlugin &
  ReservePlugin &
  PreBindPlugin & {
    /** The assume cache (tests, and the what-if that must not see assumptions of its own). */
    readonly assumed: VolumeAssumeCache;
  };

export function volumeBinding(args: VolumeBindingArgs, deps: VolumeBindingDeps): VolumeBindingPlugin {
  const timeoutMs = validTimeout(args) * 1000;
  const { storage } = deps;
  const cache = new VolumeAssumeCache(
    () => storage.volumes,
    () => storage.claims,
  );

  return {
    name: PLUGIN.VolumeBinding,
    assumed: cache,
    preFilter(state, ctx) {
      const pod = ctx.pod;
      const volumes = claimVolumes(pod);
      if (volumes.length === 0) return { skip: true };
      const claims: ClaimInfo[] = [];
      for (const v of volumes) {
        const c = cache.claim(pod.namespace, v.claimName);
        if (!c) {
          return v.ephemeral
            ? unresolvable(
                'EphemeralClaimPending',
                `waiting for ephemeral volume controller to create the persistentvolumeclaim "${v.claimName}"`,
              )
            : unresolvable('ClaimNotFound', claimNotFound(v.claimName));
        }
        if (c.phase === 'Lost') {
          return unresolvable(
            'ClaimLost',
            `persistentvolumeclaim "${c.name}" bound to non-existent persistentvolume "${c.volumeName}"`,
          );
        }
        if (c.deleting)
          return unresolvable('ClaimDeleting', `persistentvolumeclaim "${c.name}" is being deleted`);
        claims.push(c);
      }
      const bound: ClaimInfo[] = [];
      const unbound: ClaimInfo[] = [];
      const immediate: string[] = [];
      for (const c of claims) {
        if (fullyBound(c)) bound.push(c);
        // A claim pre-bound to a PV (volumeName set, bind not completed) is the PV controller's: immediate.
        else if (delayBinding(c, storage.storageClasses) && c.volumeName === '') unbound.push(c);
        else immediate.push(c.name);
      }
      if (immediate.length > 0) {
        return unresolvable(
          'UnboundImmediateClaims',
          ERR_UNBOUND_IMMEDIATE,
          `claims ${immediate.join(', ')} wait for the PV controller to bind them`,
        );
      }
      const pvsByClass = new Map<string, VolumeInfo[]>();
      for (const c of unbound) pvsByClass.set(claimClass(c), []);
      if (pvsByClass.size > 0) {
        for (const pv of cache.pvs.values()) pvsByClass.get(pv.storageClassName)?.push(pv);
      }
      const capacity = capacityInput(storage, unbound);
      state.write(STATE, {
        bound,
        unbound,
        pvsByClass,
        ...(capacity ? { capacity } : {}),
        byNode: new Map(),
        allBound: false,
      } satisfies State);
      return undefined;
    },
    filter(state, _ctx, n, verdict) {
      const s = state.read<State>(STATE);
      const node = n.node;
      if (!s || !node) return;
      const result = findPodVolumes({
        node,
        bound: s.bound.map((claim) => ({ claim, pv: cache.pvs.get(claim.volumeName) })),
        unbound: s.unbound,
        pvsByClass: s.pvsByClass,
        classes: storage.storageClasses,
        ...(s.capacity ? { capacity: s.capacity } : {}),
      });
      if (result.error) {
        addReason(verdict, {
          plugin: PLUGIN.VolumeBinding,
          code: 'VolumeBindingError',
          reason: result.error,
          detail: result.error,
          unresolvable: true,
        });
        return;
      }
      const detail = result.details.join('; ');
      for (const reason of result.reasons) {
        addReason(verdict, {
          plugin: PLUGIN.VolumeBinding,
          code: 'VolumeBindingConflict',
          reason,
          detail: detail || reason,
          unresolvable: true,
        });
      }
      if (result.reasons.length === 0) s.byNode.set(n.name, result.volumes);
    },
    reserve(state, _ctx, node) {
      const s = state.read<State>(STATE);
      if (!s) return undefined;
      const volumes = s.byNode.get(node);
      // arePodVolumesBound: nothing to bind (every claim was bound when the cycle looked).
      if (!volumes || (volumes.staticBindings.length === 0 && volumes.provisions.length === 0)) {
        s.allBound = true;
        return undefined;
      }
      const reserved: Reserved = { node, volumes, pvKeys: [], claimKeys: [] };
      const revert = () => {
        for (const k of reserved.pvKeys) cache.pvs.restore(k);
        for (const k of reserved.claimKeys) cache.claims.restore(k);
      };
      for (const { pv, claim } of volumes.staticBindings) {
        const claimRef = { namespace: claim.namespace, name: claim.name, uid: claim.uid };
        if (!cache.pvs.assume(pv.name, { ...pv, claimRef })) {
          revert();
          return `PV ${pv.name} is not in the cache`;
        }
        reserved.pvKeys.push(pv.name);
      }
      const provisions: ClaimInfo[] = [];
      for (const claim of volumes.provisions) {
        const key = claimKey(claim.namespace, claim.name);
        const assumed = { ...claim, annotations: { ...claim.annotations, [ANN_SELECTED_NODE]: node } };
        if (!cache.claims.assume(key, assumed)) {
          revert();
          return `claim ${key} is not in the cache`;
        }
        reserved.claimKeys.push(key);
        provisions.push(assumed);
      }
      reserved.volumes = { staticBindings: volumes.staticBindings, provisions };
      s.reserved = reserved;
      s.allBound = false;
      return undefined;
    },
    unreserve(state) {
      const s = state.read<State>(STATE);
      const r = s?.reserved;
      if (!s || !r) return;
      for (const k of r.pvKeys) cache.pvs.restore(k);
      for (const k of r.claimKeys) cache.claims.restore(k);
      s.reserved = undefined;
    },
    preBindPreFlight(state) {
      const s = state.read<State>(STATE);
      return s !== undefined && !s.allBound;
    },
    async preBind(state, ctx, node, signal) {
      const s = state.read<State>(STATE);
      if (!s || s.allBound) return undefined;
      const r = s.reserved;
      if (!r || r.node !== node) return `no pod volumes found for node "${node}"`;
      if (!deps.binder) return 'binding volumes: no volume binder configured';
      const nodeInfo = ctx.snapshot.get(node)?.node;
      if (!nodeInfo) return `binding volumes: failed to get node "${node}"`;
      return bindPodVolumes({
        pod: ctx.pod,
        node: nodeInfo,
        volumes: r.volumes,
        storage,
        binder: deps.binder,
        timeoutMs,
        signal,
        ...(deps.onRollbackError ? { onRollbackError: deps.onRollbackError } : {}),
      });
    },
  };
}

/**
 * The capacity check's input for a pod's unbound claims, grouped once per cycle (upstream lists every
 * CSIStorageCapacity per claim per node); undefined when no claim's class provisions through a driver
 * that tracks capacity (nothing to check).
 */
function capacityInput(storage: StorageView, unbound: readonly ClaimInfo[]): CapacityInput | undefined {
  const classes = new Set<string>();
  for (const c of unbound) {
    const sc = storage.storageClasses.get(claimClass(c));
    if (sc && storage.csiDrivers.get(sc.provisioner)?.storageCapacity === true) classes.add(sc.name);
  }
  if (classes.size === 0) return undefined;
  const byClass = new Map<string, CsiStorageCapacityInfo[]>();
  for (const c of storage.csiStorageCapacities.values()) {
    if (!classes.has(c.storageClassName)) continue;
    const list = byClass.get(c.storageClassName);
    if (list) list.push(c);
    else byClass.set(c.storageClassName, [c]);
  }
  return { drivers: storage.csiDrivers, byClass };
}
