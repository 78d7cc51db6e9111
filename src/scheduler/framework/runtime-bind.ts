/**
 * The points after a node is chosen, as frameworkImpl's: Reserve and Permit at the end of the scheduling
 * cycle, then the binding cycle's PreBind (and its pre-flight), and PostBind.
 */
import type { Profile } from './runtime.js';
import type { CycleContext, CycleState } from './types.js';

/** Reserve in order; on a refusal, Unreserve everything reserved so far and return why. */
export function runReserve(
  profile: Profile,
  state: CycleState,
  ctx: CycleContext,
  node: string,
): string | undefined {
  for (let i = 0; i < profile.reserve.length; i++) {
    const why = profile.reserve[i]?.reserve(state, ctx, node);
    if (why) {
      for (let j = i; j >= 0; j--) profile.reserve[j]?.unreserve(state, ctx, node);
      return why;
    }
  }
  for (const p of profile.permit) {
    const why = p.permit(state, ctx, node);
    if (why) {
      runUnreserve(profile, state, ctx, node);
      return why;
    }
  }
  return undefined;
}

export function runUnreserve(profile: Profile, state: CycleState, ctx: CycleContext, node: string): void {
  for (let j = profile.reserve.length - 1; j >= 0; j--) profile.reserve[j]?.unreserve(state, ctx, node);
}

/** RunPreBindPreFlights: whether any PreBind plugin will do work for the pod on `node`. */
export function preBindHasWork(
  profile: Profile,
  state: CycleState,
  ctx: CycleContext,
  node: string,
): boolean {
  return profile.preBind.some((p) => p.preBindPreFlight?.(state, ctx, node) === true);
}

export async function runPreBind(
  profile: Profile,
  state: CycleState,
  ctx: CycleContext,
  node: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  for (const p of profile.preBind) {
    const why = await p.preBind(state, ctx, node, signal);
    if (why) return `${p.name}: ${why}`;
  }
  return undefined;
}

export function runPostBind(profile: Profile, state: CycleState, ctx: CycleContext, node: string): void {
  for (const p of profile.postBind) p.postBind(state, ctx, node);
}
