import type { ComponentFactory } from './app.js';

/** Every capability of the gateway, in start order. */
export function allComponents(): ComponentFactory[] {
  return [];
}
