/**
 * Client-visible errors. Anything else thrown by a resolver is masked by yoga as "Unexpected error."
 * (code INTERNAL_SERVER_ERROR) and logged, so no stack trace ever reaches a client.
 */
import { createGraphQLError } from 'graphql-yoga';

export type ErrorCode = 'NOT_FOUND' | 'BAD_USER_INPUT' | 'UNAVAILABLE' | 'FORBIDDEN' | 'UNAUTHENTICATED';

export function graphQLError(code: ErrorCode, message: string, extra: Record<string, unknown> = {}) {
  return createGraphQLError(message, { extensions: { code, ...extra } });
}

export function notFound(kind: string, key: string) {
  return graphQLError('NOT_FOUND', `${kind} "${key}" not found`, { kind, key });
}

/** `field` is the argument path, e.g. "spec.maxCPU", so a form can point at the offending input. */
export function badUserInput(message: string, field?: string) {
  return graphQLError('BAD_USER_INPUT', message, field ? { field } : {});
}
