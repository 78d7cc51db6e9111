/**
 * The pods the extender let through whose bind has not arrived yet. kube-scheduler starts the next
 * pod's scheduling cycle as soon as it has assumed the previous one, and binds in the background: its
 * next filter call can reach nodeload before the previous pod's bind does, when neither the snapshot
 * nor the load tracker counts that pod yet — two pods could then take the same headroom under a rule.
 * So a covered pod's filter first waits for the binds of the pods let through before it.
 *
 * The wait is bounded: a pod kube-scheduler gave up on after our answer (its Reserve or Permit failed),
 * or one whose PreBind waits for a volume, never sends its bind in time; it is given up on then, so
 * later filters do not wait for it again.
 */
export class AwaitedBinds {
  /** uid → when our answer let it through; oldest first. */
  private readonly pending = new Map<string, number>();
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly now: () => number,
    private readonly maxPending = 10_000,
  ) {}

  /** Our answer let the pod through: its bind should follow. */
  expect(uid: string): void {
    this.pending.delete(uid);
    this.pending.set(uid, this.now());
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
