/**
 * Every capability of the gateway, in start order. The operator and scheduler are built first: the
 * views (GraphQL) read their state.
 */

import { aggregatedApiComponent } from './aggregated/component.js';
import type { ComponentFactory } from './app.js';
import { extenderComponent } from './extender/component.js';
import { graphqlComponent } from './graphql/component.js';
import { operatorComponent } from './operator/component.js';
import type { Operator } from './operator/operator.js';
import { schedulerComponent } from './scheduler/component.js';
import type { Scheduler } from './scheduler/scheduler.js';
import { dashboardRouter } from './server/dashboard.js';
import { webhookComponent } from './webhook/component.js';

export function allComponents(): ComponentFactory[] {
  let operator: Operator | undefined;
  let scheduler: Scheduler | undefined;
  return [
    (ctx) => {
      const c = operatorComponent(ctx);
      operator = c.operator;
      return c;
    },
    (ctx) => {
      const c = schedulerComponent(ctx);
      scheduler = c.scheduler;
      return c;
    },
    webhookComponent,
    aggregatedApiComponent,
    (ctx) => {
      if (!scheduler) throw new Error('the scheduler must be built before the extender');
      return extenderComponent(ctx, { scheduler });
    },
    (ctx) => {
      if (!scheduler) throw new Error('the scheduler must be built before GraphQL');
      return graphqlComponent(ctx, { operator, scheduler });
    },
    () => ({ name: 'dashboard', userRoutes: dashboardRouter() }),
  ];
}
