/**
 * Yoga logs through a `{debug, info, warn, error}` object with console-style arguments; this maps
 * them onto the gateway's pino logger (component=graphql) so errors keep their stack under `err`.
 */
import type { YogaLogger } from 'graphql-yoga';
import type { Logger } from '../server/log.js';

type Level = 'debug' | 'info' | 'warn' | 'error';

function write(log: Logger, level: Level, args: unknown[]): void {
  if (!log.isLevelEnabled(level)) return;
  const err = args.find((a): a is Error => a instanceof Error);
  const text = args
    .filter((a) => a !== err)
    .map((a) => (typeof a === 'string' ? a : safeJson(a)))
    .join(' ');
  if (err) log[level]({ err }, text || err.message);
  else log[level](text);
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

export function yogaLogger(log: Logger): YogaLogger {
  return {
    debug: (...args: unknown[]) => write(log, 'debug', args),
    info: (...args: unknown[]) => write(log, 'info', args),
    warn: (...args: unknown[]) => write(log, 'warn', args),
    error: (...args: unknown[]) => write(log, 'error', args),
  };
}
