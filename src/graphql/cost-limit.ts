/**
 * The cost limit, enforced where the operation's variables are known: before execute or subscribe, for
 * every transport (HTTP, SSE, and graphql-ws, whose operations go through the same envelop plugins).
 * graphql-armor's costLimit runs at validation, which sees only literals: `first: $n` with n = 500 cost
 * it 1 (and yoga caches validation by document, so a rule reading variables could not run there).
 * Here the cost is @pothos/plugin-complexity's (fields' `complexity`, complexity.ts) over the operation
 * that would run, with its variables coerced as execution will coerce them (defaults included).
 */
import { complexityFromQuery } from '@pothos/plugin-complexity';
import type {
  DocumentNode,
  ExecutionArgs,
  ExecutionResult,
  GraphQLSchema,
  OperationDefinitionNode,
} from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * The default limit: twice the heaviest operation the dashboard, GraphiQL's tabs and the README send
 * (GraphiQL's History tab, 20 decisions with their candidates: 12,061). A page of 500 of the dashboard's
 * decision summaries (8,001) fits, three under aliases too, four do not; 500 decisions with candidates
 * and their reasons (111,501) do not.
 */
export const DEFAULT_MAX_COST = 25_000;

/** The operation that would run: the one named, or the only one (otherwise execution reports why not). */
function selectedOperation(
  document: DocumentNode,
  operationName: string | null | undefined,
): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === 'OperationDefinition',
  );
  if (operationName) return operations.find((op) => op.name?.value === operationName);
  return operations.length === 1 ? operations[0] : undefined;
}

/** By name, not instanceof: a test runner may load a second copy of graphql (see schema.ts). */
function isGraphQLError(err: unknown): boolean {
  return err instanceof Error && err.name === 'GraphQLError';
}

/**
 * What the operation costs with these variables; undefined when there is no such operation or its
 * variables do not coerce — execution refuses those with its own message.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): number | undefined {
  const operation = selectedOperation(document, operationName);
  if (!operation) return undefined;
  // complexityFromQuery measures a document's first operation: give it the selected one and the fragments.
  const alone: DocumentNode = {
    ...document,
    definitions: [operation, ...document.definitions.filter((d) => d.kind === 'FragmentDefinition')],
  };
  try {
    return complexityFromQuery(alone, { schema, variables: variables ?? {} }).complexity;
  } catch (err) {
    if (isGraphQLError(err)) return undefined;
    throw err;
  }
}

/** The refusal: a validation error like armor's (`limit` names the protection), nothing executed. */
function costLimitExceeded(cost: number, maxCost: number): ExecutionResult {
  return {
    errors: [
      createGraphQLError(`Query cost limit of ${maxCost} exceeded, found ${cost}.`, {
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: 'costLimit', cost, maxCost },
      }),
    ],
  };
}

export function useCostLimit(opts: { maxCost: number }): Plugin {
  const check = (args: ExecutionArgs, stop: (result: ExecutionResult) => void) => {
    const cost = operationCost(args.schema, args.document, args.operationName, args.variableValues);
    if (cost !== undefined && cost > opts.maxCost) stop(costLimitExceeded(cost, opts.maxCost));
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}
