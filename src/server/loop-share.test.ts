import { describe, expect, it } from 'vitest';
import { LoopShare, type LoopShareOptions } from './loop-share.js';

function share(opts: Partial<LoopShareOptions> = {}) {
  const clock = { now: 0 };
  const s = new LoopShare({
    share: 0.25,
    burstMs: 50,
    maxChargeMs: 100,
    contentionWindowMs: 250,
    now: () => clock.now,
    ...opts,
  });
  return { s, clock };
}

describe('LoopShare', () => {
  it.each([
    // charges in ms at t=0, then: contended?, wait expected (debt / share)
    { name: 'within the burst', charges: [50], contended: true, wait: 0 },
    { name: 'in debt, kube side busy', charges: [60], contended: true, wait: 40 }, // 10 ms debt / 0.25
    { name: 'in debt, nothing else wants the loop', charges: [60], contended: false, wait: 0 },
    { name: 'a charge is capped at maxChargeMs', charges: [1000], contended: true, wait: 200 }, // 50 − 100
    { name: 'debt is bounded by one request', charges: [100, 100, 100], contended: true, wait: 400 },
    { name: 'a negative time charges nothing', charges: [-5], contended: true, wait: 0 },
  ])('$name', ({ charges, contended, wait }) => {
    const { s } = share();
    if (contended) s.kubeActivity();
    for (const c of charges) s.charge(c);
    expect(s.waitMs()).toBe(wait);
  });

  it('refills at `share` ms per ms of wall time, up to the burst', () => {
    const { s, clock } = share();
    s.kubeActivity();
    s.charge(90); // 40 ms of debt: 160 ms to pay back
    clock.now = 100; // +25 ms of budget
    s.kubeActivity();
    expect(s.waitMs()).toBe(60);
    clock.now = 160;
    expect(s.waitMs()).toBe(0);
    clock.now = 10_000; // long idle: the bucket holds the burst, not 2.5 s of it
    s.kubeActivity();
    s.charge(60);
    expect(s.waitMs()).toBe(40);
  });

  it('is contended for contentionWindowMs after a kube-port request, or while a probe says so', () => {
    const { s, clock } = share();
    expect(s.contended).toBe(false);
    s.kubeActivity();
    clock.now = 249;
    expect(s.contended).toBe(true);
    clock.now = 250;
    expect(s.contended).toBe(false);
    let busy = true;
    s.contendedWhile(() => busy);
    expect(s.contended).toBe(true);
    busy = false;
    expect(s.contended).toBe(false);
  });

  it('share 1 never holds the user port back', () => {
    const { s } = share({ share: 1 });
    s.kubeActivity();
    s.charge(100);
    expect(s.waitMs()).toBe(0);
  });
});
