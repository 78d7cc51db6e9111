/** The whole schema: importing the type modules registers their types on the builder. */
import type { GraphQLSchema } from 'graphql';
// Deep imports on purpose: they load graphql's CommonJS build, the copy Pothos builds the schema with,
// also under vitest (which resolves the bare 'graphql' to index.mjs, a second copy whose realm
// checks reject the schema's types).
import { lexicographicSortSchema } from 'graphql/utilities/lexicographicSortSchema.js';
import { printSchema } from 'graphql/utilities/printSchema.js';
import { builder } from './builder.js';
import './nodes.js';
import './rules.js';
import './scheduling.js';
import './simulate.js';
import './subscriptions.js';

let built: GraphQLSchema | undefined;

export function graphqlSchema(): GraphQLSchema {
  built ??= builder.toSchema();
  return built;
}

/** The SDL as committed in schema/schema.graphql: sorted, so reordering code never changes it. */
export function printSortedSchema(schema: GraphQLSchema = graphqlSchema()): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
