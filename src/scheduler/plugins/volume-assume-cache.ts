/**
 * VolumeBinding's assume cache (upstream's AssumeCache for PVs and PVCs): Reserve records, in memory,
 * the PV ↔ claim bindings and the claims' selected node it decided on, so the next cycles see them
 * before the API does — the same PV is not handed to a second claim, a claim another pod is provisioning
 * stays on its node. An assumed object stands in for the informer's until the informer delivers a
 * newer version of it (its resourceVersion moved: our own write arrived, or someone else's) or
 * Unreserve restores it.
 */
import type { ClaimInfo, VolumeInfo } from '../../cluster/model.js';
import { claimKey } from './volume-common.js';

interface Assumed<T> {
  /** The informer's resourceVersion the assumption was made over. */
  baseVersion: string;
  value: T;
}

/** A ReadonlyMap view of `base` with the assumed entries laid over it. */
class Overlay<T extends { resourceVersion: string }> {
  private readonly assumed = new Map<string, Assumed<T>>();

  constructor(private readonly base: () => ReadonlyMap<string, T>) {}

  get(key: string): T | undefined {
    const real = this.base().get(key);
    const a = this.assumed.get(key);
    if (!a) return real;
    if (!real || real.resourceVersion !== a.baseVersion) {
      // The informer moved on (or the object is gone): its version wins.
      this.assumed.delete(key);
      return real;
    }
    return a.value;
  }

  /** Every object, assumed versions in place of the informer's. */
  *values(): IterableIterator<T> {
    for (const [key, real] of this.base()) {
      const a = this.assumed.get(key);
      yield a && a.baseVersion === real.resourceVersion ? a.value : real;
    }
  }

  /** Returns false when the informer does not have the object (nothing to assume over). */
  assume(key: string, value: T): boolean {
    const real = this.base().get(key);
    if (!real) return false;
    this.assumed.set(key, { baseVersion: real.resourceVersion, value });
    return true;
  }

  restore(key: string): void {
    this.assumed.delete(key);
  }

  get size(): number {
    return this.assumed.size;
  }
}

export class VolumeAssumeCache {
  readonly pvs: Overlay<VolumeInfo>;
  readonly claims: Overlay<ClaimInfo>;

  constructor(volumes: () => ReadonlyMap<string, VolumeInfo>, claims: () => ReadonlyMap<string, ClaimInfo>) {
    this.pvs = new Overlay(volumes);
    this.claims = new Overlay(claims);
  }

  claim(namespace: string, name: string): ClaimInfo | undefined {
    return this.claims.get(claimKey(namespace, name));
  }

  /** How many assumptions are held (tests). */
  get assumedCount(): number {
    return this.pvs.size + this.claims.size;
  }
}
