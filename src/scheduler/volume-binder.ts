/**
 * VolumeBinding's writes to the API server (upstream's bindAPIUpdate), the one I/O edge of the volume
 * plugins; the plugin gets it through PluginDeps so tests pass a fake.
 *
 * - static binding: the PV's spec.claimRef is set to the claim (with pv.kubernetes.io/bound-by-controller,
 *   as GetBindVolumeToClaim does) — the PV controller in kube-controller-manager then completes the bind;
 * - dynamic provisioning: the claim gets volume.kubernetes.io/selected-node: <node> — the provisioner
 *   (external-provisioner, or the in-tree one) creates the PV there.
 * Both are merge patches carrying the resourceVersion the scheduler decided on, so a concurrent change
 * fails them with 409 as upstream's Update would. The rollbacks (nodeload's: upstream leaves its writes
 * in place) undo only a write nobody acted on: they carry the resourceVersion our write produced, and
 * after a conflict re-read the object and undo only while the claim is still unbound.
 */
import {
  ApiException,
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { toClaimInfo, toVolumeInfo } from '../cluster/convert-storage.js';
import type { ClaimInfo, VolumeInfo } from '../cluster/model.js';
import { apiErrorMessage } from './binder.js';
import { ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE } from './plugins/volume-common.js';

export interface VolumeBinder {
  /** Sets the PV's claimRef to the claim; resolves with the PV as written. */
  bindVolume(pv: VolumeInfo, claim: ClaimInfo): Promise<VolumeInfo>;
  /** Sets volume.kubernetes.io/selected-node on the claim; resolves with the claim as written. */
  selectNode(claim: ClaimInfo, node: string): Promise<ClaimInfo>;
  /** Takes back a claimRef bindVolume set (`written`: the PV it returned), unless the bind went ahead. */
  unbindVolume(written: VolumeInfo, claim: ClaimInfo): Promise<void>;
  /** Removes the selected-node annotation selectNode set (`written`: the claim it returned), unless provisioned. */
  unselectNode(written: ClaimInfo, node: string): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: patch bodies are plain JSON.
type Json = any;

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const ROLLBACK_ATTEMPTS = 3;

/** `pv` as the informer showed it: a PV the user pre-bound to the claim is not marked bound-by-controller. */
export function claimRefPatch(pv: VolumeInfo, claim: ClaimInfo): Json {
  const prebound = pv.claimRef?.name === claim.name && pv.claimRef.namespace === claim.namespace;
  return {
    metadata: {
      resourceVersion: pv.resourceVersion,
      ...(prebound ? {} : { annotations: { [ANN_BOUND_BY_CONTROLLER]: 'yes' } }),
    },
    spec: {
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: claim.namespace,
        name: claim.name,
        uid: claim.uid,
        resourceVersion: claim.resourceVersion,
      },
    },
  };
}

export function selectedNodePatch(claim: ClaimInfo, node: string | null): Json {
  return { metadata: { resourceVersion: claim.resourceVersion, annotations: { [ANN_SELECTED_NODE]: node } } };
}

function conflict(err: unknown): boolean {
  return err instanceof ApiException && err.code === 409;
}

function notFound(err: unknown): boolean {
  return err instanceof ApiException && err.code === 404;
}

export class KubeVolumeBinder implements VolumeBinder {
  private readonly core: CoreV1Api;

  constructor(kubeConfig: KubeConfig) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  async bindVolume(pv: VolumeInfo, claim: ClaimInfo): Promise<VolumeInfo> {
    try {
      const out = await this.core.patchPersistentVolume(
        { name: pv.name, body: claimRefPatch(pv, claim) },
        MERGE,
      );
      return toVolumeInfo(out);
    } catch (err) {
      throw new Error(
        `binding PV ${pv.name} to claim ${claim.namespace}/${claim.name}: ${apiErrorMessage(err)}`,
      );
    }
  }

  async selectNode(claim: ClaimInfo, node: string): Promise<ClaimInfo> {
    try {
      const out = await this.core.patchNamespacedPersistentVolumeClaim(
        { name: claim.name, namespace: claim.namespace, body: selectedNodePatch(claim, node) },
        MERGE,
      );
      return toClaimInfo(out);
    } catch (err) {
      throw new Error(
        `selecting node ${node} for claim ${claim.namespace}/${claim.name}: ${apiErrorMessage(err)}`,
      );
    }
  }

  async unbindVolume(written: VolumeInfo, claim: ClaimInfo): Promise<void> {
    let pv = written;
    for (let i = 0; i < ROLLBACK_ATTEMPTS; i++) {
      if (pv.claimRef?.uid !== claim.uid || pv.phase === 'Bound') return;
      try {
        const c = toClaimInfo(
          await this.core.readNamespacedPersistentVolumeClaim({
            name: claim.name,
            namespace: claim.namespace,
          }),
        );
        // The PV controller bound the claim to this PV meanwhile: taking the claimRef back would lose it.
        if (c.volumeName === pv.name) return;
      } catch (err) {
        if (!notFound(err)) throw err;
      }
      try {
        await this.core.patchPersistentVolume(
          {
            name: pv.name,
            body: {
              metadata: {
                resourceVersion: pv.resourceVersion,
                annotations: { [ANN_BOUND_BY_CONTROLLER]: null },
              },
              spec: { claimRef: null },
            },
          },
          MERGE,
        );
        return;
      } catch (err) {
        if (notFound(err)) return;
        if (!conflict(err)) throw err;
        pv = toVolumeInfo(await this.core.readPersistentVolume({ name: pv.name }));
      }
    }
  }

  async unselectNode(written: ClaimInfo, node: string): Promise<void> {
    let claim = written;
    for (let i = 0; i < ROLLBACK_ATTEMPTS; i++) {
      if (claim.annotations[ANN_SELECTED_NODE] !== node || claim.volumeName !== '') return;
      try {
        await this.core.patchNamespacedPersistentVolumeClaim(
          { name: claim.name, namespace: claim.namespace, body: selectedNodePatch(claim, null) },
          MERGE,
        );
        return;
      } catch (err) {
        if (notFound(err)) return;
        if (!conflict(err)) throw err;
        claim = toClaimInfo(
          await this.core.readNamespacedPersistentVolumeClaim({
            name: claim.name,
            namespace: claim.namespace,
          }),
        );
      }
    }
  }
}
