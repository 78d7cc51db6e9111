/** Leadership switched by hand, for the components that act only while they lead (operator, scheduler). */
import { EventBus } from '../../src/events/bus.js';
import type { LeaderEvents, Leadership } from '../../src/leader/lease.js';

export class FakeLeader implements Leadership {
  private readonly bus = new EventBus<LeaderEvents>();
  constructor(
    private leading = true,
    readonly identity = 'test-instance',
  ) {}

  isLeader(): boolean {
    return this.leading;
  }

  on(event: keyof LeaderEvents, fn: () => void): () => void {
    return this.bus.on(event, fn);
  }

  /** Gains or loses the lease, emitting what the elector emits. */
  set(leading: boolean): void {
    this.leading = leading;
    this.bus.emit(leading ? 'started-leading' : 'stopped-leading');
  }
}
