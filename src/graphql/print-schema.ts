/**
 * `npm run schema:print`: writes the sorted SDL to schema/schema.graphql. schema.test.ts fails when the
 * committed file differs from what the code builds, so run this after changing a type.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printSortedSchema } from './schema.js';

/** Resolved from this module: src/graphql (tsx) and dist/graphql (build) are both two levels below the root. */
export const SCHEMA_PATH = fileURLToPath(new URL('../../schema/schema.graphql', import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(SCHEMA_PATH, printSortedSchema());
  process.stdout.write(`wrote ${SCHEMA_PATH}\n`);
}
