/**
 * What the GraphQL layer reads, as narrow interfaces ("sources"). component.ts adapts the live
 * ClusterCache, LoadTracker, Operator and Scheduler to them; unit tests hand in plain fakes. Every
 * source is read-only: nothing reachable from a resolver can change the cluster.
 */
import type http from 'node:http';
import type { YogaServerInstance } from 'graphql-yoga';
import type { NodeInfo, PodInfo } from '../cluster/model.js';
import type { LoadChange } from '../load/tracker.js';
import type { NodeLoad } from '../load/types.js';
import type { NodeLoadRule, RuleEvaluation } from '../rules/types.js';
import type { Access } from '../server/access.js';
import type { SchedulingSource } from './scheduling-source.js';

export interface ClusterSource {
  nodes(): Iterable<NodeInfo>;
  node(name: string): NodeInfo | undefined;
  /** Every pod in the cache (bound and pending). */
  pods(): Iterable<PodInfo>;
  pod(namespace: string, name: string): PodInfo | undefined;
  podsOnNode(node: string): Iterable<PodInfo>;
  rules(): Iterable<NodeLoadRule>;
  rule(namespace: string, name: string): NodeLoadRule | undefined;
}

export interface LoadSourceView {
  loadOf(node: string): NodeLoad | undefined;
  /** Every node's current load, by node name. */
  loads(): ReadonlyMap<string, NodeLoad>;
  /** Called for every node whose load changed (or which went away); returns the unsubscribe function. */
  onChange(listener: (change: LoadChange) => void): () => void;
}

export interface RuleSource {
  /** The operator's latest evaluation of the rule; undefined before its first pass. */
  evaluation(namespace: string, name: string): RuleEvaluation | undefined;
}

export interface GraphQLSources {
  cluster: ClusterSource;
  loads: LoadSourceView;
  rules: RuleSource;
  scheduling: SchedulingSource;
  /** Milliseconds since the epoch (injected so tests are deterministic). */
  now(): number;
}

/** The per-operation context: the server's sources, and who asks (authorize.ts decides what they see). */
export interface GraphQLContext {
  sources: GraphQLSources;
  access: Access;
  /** What lists left out, by permission name: namespaces (none for cluster-scoped data). */
  omitted: Map<string, Set<string>>;
}

/**
 * What the server context carries in: the HTTP request, whose Access the user port's gate set, or (a
 * WebSocket operation) the connection's Access.
 */
export interface GraphQLServerContext {
  req?: http.IncomingMessage;
  access?: Access | undefined;
}

export type GraphQLYoga = YogaServerInstance<GraphQLServerContext, GraphQLContext>;
