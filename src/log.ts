/**
 * Moved to src/server/log.ts (logging is plumbing, rank 0 of the import rules): this re-export keeps
 * the scheduler's imports compiling until they point there. Delete it then.
 */
export * from './server/log.js';
