/**
 * The pods the extender let through whose bind has not arrived yet. kube-scheduler starts the next
 * pod's scheduling cycle as soon as it has assumed the previous one, and binds in the background: its
 * next filter call can reach nodeload before the previous pod's bind does, when neither the snapshot
 * nor the load tracker counts that pod yet — two pods could then take the same headroom under a rule.
 * So a covered pod's filter first waits for the binds of the pods let through before it, when they could
 * change its answer.
 *
 * The wait is bounded: a pod kube-scheduler gave up on after our answer (its Reserve or Permit failed),
 * or one whose PreBind waits for a volume, never sends its bind in time; it is given up on then, so
 * later filters do not wait for it again. And it is skipped when it cannot change the answer
 * (ExtenderEngine: the same feasible nodes with the pending pods counted on every node they may take).
 */

/** A pod let through whose bind has not arrived. */
export interface PendingBind<P> {
  /** When our answer let it through. */
  at: number;
  pod: P;
  /** The nodes it may bind to: those our answer let it through to. */
  nodes: readonly string[];
}

export class AwaitedBinds<P = unknown> {
  /** uid → the pod let through; oldest first. */
  private readonly pending = new Map<string, PendingBind<P>>();
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly now: () => number,
    private readonly maxPending = 10_000,
  ) {}

  /** Our answer let the pod through to `nodes`: its bind should follow. */
  expect(uid: string, pod: P, nodes: readonly string[]): void {
    this.pending.delete(uid);
    this.pending.set(uid, { at: this.now(), pod, nodes });
    for (const oldest of this.pending.keys()) {
      if (this.pending.size <= this.maxPending) break;
      this.pending.delete(oldest);
    }
  }

  /** The pod's bind arrived (and its placement is assumed), or the pod is being filtered again. */
  arrived(uid: string): void {
    if (!this.pending.delete(uid)) return;
    for (const check of [...this.waiters]) check();
  }

  get size(): number {
    return this.pending.size;
  }

  /**
   * The pods let through whose bind has not arrived, but `self`; those let through more than
   * `maxAgeMs` ago are given up on (as a wait for them would be) and dropped.
   */
  pendingExcept(self: string, maxAgeMs: number): PendingBind<P>[] {
    const out: PendingBind<P>[] = [];
    const now = this.now();
    let dropped = false;
    for (const [uid, p] of this.pending) {
      if (now - p.at > maxAgeMs) {
        this.pending.delete(uid);
        dropped = true;
      } else if (uid !== self) out.push(p);
    }
    // Giving up on them may complete waits in progress.
    if (dropped) for (const check of [...this.waiters]) check();
    return out;
  }

  /**
   * Resolves once every pod let through before this call (but `self`) has its bind arrived, or after
   * `maxWaitMs`, when those still missing are given up on. Resolves at once when there are none.
   */
  waitForEarlier(self: string, maxWaitMs: number): Promise<void> {
    const earlier = [...this.pending.keys()].filter((uid) => uid !== self);
    if (earlier.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (earlier.every((uid) => !this.pending.has(uid))) done();
      };
      timer = setTimeout(() => {
        for (const uid of earlier) this.pending.delete(uid);
        done();
        // Giving up on them may complete other waits too.
        for (const other of [...this.waiters]) other();
      }, maxWaitMs);
      this.waiters.add(check);
    });
  }
}
