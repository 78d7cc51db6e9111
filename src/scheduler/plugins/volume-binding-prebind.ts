/**
 * VolumeBinding's PreBind (upstream's BindPodVolumes): make the API writes for the reserved bindings,
 * then wait — bounded by bindTimeoutSeconds, woken by the cache's claim/PV/pod changes and polled each
 * second as upstream polls — until every claim is fully bound (checkBindings):
 *
 *   static binding (PV ← claimRef): the PV as cached is at least the version we wrote, still fits the
 *     node, still has a claimRef with a UID ("ClaimRef got reset for pv" otherwise), and the claim has
 *     volumeName + pv.kubernetes.io/bind-completed (the PV controller's bind);
 *   provisioning (claim ← selected-node): the claim still names the node — a provisioner that gives up
 *     removes the annotation ("provisioning failed for PVC") — and, once it has a volume, that PV fits
 *     the node and the claim is fully bound;
 *   the pod must still exist.
 * On an error, the timeout ("timed out waiting for the condition") or an abort, the writes made are
 * rolled back (nodeload's addition, see volume-binder.ts) and the error returned: the loop unreserves
 * and retries the pod.
 */
import type { ClaimInfo, NodeInfo, PodInfo, VolumeInfo } from '../../cluster/model.js';
import type { VolumeBinder } from '../volume-binder.js';
import type { PodVolumes } from './volume-binding-match.js';
import {
  ANN_SELECTED_NODE,
  claimKey,
  fullyBound,
  olderThan,
  type StorageView,
  volumeFitsNode,
} from './volume-common.js';

const POLL_MS = 1000;
export const TIMEOUT_MESSAGE = 'timed out waiting for the condition';

interface Written {
  /** `prebound`: the user had pointed the PV at the claim already; a rollback leaves it so. */
  pvs: { pv: VolumeInfo; claim: ClaimInfo; prebound?: boolean }[];
  claims: ClaimInfo[];
}

export interface BindRequest {
  pod: PodInfo;
  node: NodeInfo;
  volumes: PodVolumes;
  storage: StorageView;
  binder: VolumeBinder;
  timeoutMs: number;
  signal: AbortSignal;
  /** Rollback failures are reported here (they do not change the outcome). */
  onRollbackError?: (err: unknown) => void;
}

/** checkBindings: true when all is bound, false to keep waiting, a string to give up with. */
export function checkBindings(
  pod: PodInfo,
  node: NodeInfo,
  written: Written,
  storage: StorageView,
): boolean | string {
  const current = storage.pods.get(claimKey(pod.namespace, pod.name));
  if (!current || current.uid !== pod.uid) return 'pod does not exist any more';
  for (const w of written.pvs) {
    const pv = storage.volumes.get(w.pv.name);
    if (!pv) return `failed to check binding: persistentvolume "${w.pv.name}" not found`;
    const claim = storage.claims.get(claimKey(w.claim.namespace, w.claim.name));
    if (!claim) return `failed to check binding: persistentvolumeclaim "${w.claim.name}" not found`;
    if (olderThan(pv.resourceVersion, w.pv.resourceVersion)) return false;
    if (!volumeFitsNode(pv, node)) return `pv "${pv.name}" node affinity doesn't match node "${node.name}"`;
    if (!pv.claimRef || pv.claimRef.uid === '') return `ClaimRef got reset for pv "${pv.name}"`;
    if (!fullyBound(claim)) return false;
  }
  for (const w of written.claims) {
    const claim = storage.claims.get(claimKey(w.namespace, w.name));
    if (!claim) return `failed to check provisioning pvc: persistentvolumeclaim "${w.name}" not found`;
    if (olderThan(claim.resourceVersion, w.resourceVersion)) return false;
    if (claim.annotations[ANN_SELECTED_NODE] !== node.name)
      return `provisioning failed for PVC "${claim.name}"`;
    if (claim.volumeName !== '') {
      const pv = storage.volumes.get(claim.volumeName);
      // Not in the cache yet: the PV watch lags the claim's; look again on the next change.
      if (!pv) return false;
      if (!volumeFitsNode(pv, node)) return `pv "${pv.name}" node affinity doesn't match node "${node.name}"`;
    }
    if (!fullyBound(claim)) return false;
  }
  return true;
}

/** Waits until `check` settles, the timeout or the abort; resolves with undefined (done) or why not. */
function waitUntil(
  check: () => boolean | string,
  storage: StorageView,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (why: string | undefined) => {
      if (done) return;
      done = true;
      off();
      clearInterval(poll);
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(why);
    };
    const evaluate = () => {
      if (done) return;
      let r: boolean | string;
      try {
        r = check();
      } catch (err) {
        r = err instanceof Error ? err.message : String(err);
      }
      if (r === true) finish(undefined);
      else if (typeof r === 'string') finish(r);
    };
    const onAbort = () => finish('aborted: the scheduler stopped or lost leadership');
    const off = storage.onChange(evaluate);
    const poll = setInterval(evaluate, POLL_MS);
    const timer = setTimeout(() => finish(TIMEOUT_MESSAGE), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    else evaluate();
  });
}

function newest<T extends { resourceVersion: string }>(cached: T | undefined, written: T): T {
  return cached && olderThan(written.resourceVersion, cached.resourceVersion) ? cached : written;
}

async function rollback(req: BindRequest, written: Written): Promise<void> {
  const { binder, storage, node } = req;
  const undo: Promise<void>[] = [
    ...written.pvs
      .filter((w) => !w.prebound)
      .map((w) => binder.unbindVolume(newest(storage.volumes.get(w.pv.name), w.pv), w.claim)),
    ...written.claims.map((w) =>
      binder.unselectNode(newest(storage.claims.get(claimKey(w.namespace, w.name)), w), node.name),
    ),
  ];
  for (const r of await Promise.allSettled(undo)) {
    if (r.status === 'rejected') req.onRollbackError?.(r.reason);
  }
}

/** The API writes, then the wait; undefined when every claim is bound, else the error (already rolled back). */
export async function bindPodVolumes(req: BindRequest): Promise<string | undefined> {
  const written: Written = { pvs: [], claims: [] };
  let why: string | undefined;
  try {
    for (const b of req.volumes.staticBindings) {
      if (req.signal.aborted) throw new Error('aborted before binding');
      const prebound = b.pv.claimRef?.name === b.claim.name && b.pv.claimRef.namespace === b.claim.namespace;
      written.pvs.push({ pv: await req.binder.bindVolume(b.pv, b.claim), claim: b.claim, prebound });
    }
    for (const c of req.volumes.provisions) {
      if (req.signal.aborted) throw new Error('aborted before provisioning');
      written.claims.push(await req.binder.selectNode(c, req.node.name));
    }
    why = await waitUntil(
      () => checkBindings(req.pod, req.node, written, req.storage),
      req.storage,
      req.timeoutMs,
      req.signal,
    );
  } catch (err) {
    why = err instanceof Error ? err.message : String(err);
  }
  if (why === undefined) return undefined;
  await rollback(req, written);
  return `binding volumes: ${why}`;
}
