/**
 * The operator as a gateway component, with the original design's GET /operator/suggestions (the
 * list of {node, rule} for every node satisfying every rule, now with the figures behind it) and
 * GET /operator/rebalance-hints.
 */
import { Router } from 'express';
import type { ClusterView } from '../cluster/view.js';
import type { LeaderElector } from '../leader/lease.js';
import type { LoadView } from '../load/tracker.js';
import type { NodeLoadRule } from '../rules/types.js';
import { PERMISSIONS } from '../server/access.js';
import type { ComponentContext, GatewayComponent } from '../server/component.js';
import { componentLogger } from '../server/log.js';
import { sendReadable } from '../server/user-auth.js';
import { KubeRuleWriter, type RuleWriter } from './kube.js';
import { Operator } from './operator.js';

export interface OperatorDeps {
  /** Defaults to the gateway's one elector, ctx.leader. */
  leader?: LeaderElector;
  /** Replaces the API writer (tests). */
  writer?: RuleWriter;
}

function stringParam(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function operatorRoutes(operator: Operator): Router {
  const router = Router();
  // ?namespace= and ?rule= narrow the list; without them it is the original's full list, of the
  // namespaces where the user may list NodeLoadRules (the header X-Nodeload-Omitted-Namespaces counts the rest).
  router.get('/operator/suggestions', async (req, res) => {
    const namespace = stringParam(req.query['namespace']);
    const rule = stringParam(req.query['rule']);
    const suggestions = operator
      .suggestions()
      .filter(
        (s) =>
          (namespace === undefined || s.namespace === namespace) && (rule === undefined || s.rule === rule),
      );
    await sendReadable(req, res, PERMISSIONS.listRules, suggestions, (s) => s.namespace, { namespace });
  });
  router.get('/operator/rebalance-hints', async (req, res) => {
    const namespace = stringParam(req.query['namespace']);
    const hints = operator
      .rebalanceHints()
      .filter((h) => namespace === undefined || h.namespace === namespace);
    await sendReadable(req, res, PERMISSIONS.listRules, hints, (h) => h.namespace, { namespace });
  });
  return router;
}

/** The part of the gateway's context the operator uses. */
export interface OperatorContext extends ComponentContext {
  cache: ClusterView<NodeLoadRule>;
  loads: LoadView;
  leader: LeaderElector;
}

export function operatorComponent(
  ctx: OperatorContext,
  deps: OperatorDeps = {},
): GatewayComponent & { operator: Operator } {
  const leader = deps.leader ?? ctx.leader;
  const operator = new Operator({
    cache: ctx.cache,
    loads: ctx.loads,
    leader,
    writer: deps.writer ?? new KubeRuleWriter(ctx.kubeConfig),
    identity: leader.identity,
    log: componentLogger(ctx.log, 'operator'),
    registry: ctx.registry,
  });
  return {
    name: 'operator',
    operator,
    userRoutes: operatorRoutes(operator),
    start: () => operator.start(),
    stop: () => operator.stop(),
  };
}
