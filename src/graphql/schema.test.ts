import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_PATH } from './print-schema.js';
import { graphqlSchema, printSortedSchema } from './schema.js';

describe('schema/schema.graphql', () => {
  it('is what the code builds (run `npm run schema:print` after changing a type)', () => {
    expect(readFileSync(SCHEMA_PATH, 'utf8')).toBe(printSortedSchema());
  });

  it('exposes the operations the dashboard relies on', () => {
    const schema = graphqlSchema();
    const query = schema.getQueryType()?.getFields() ?? {};
    for (const f of [
      'nodes',
      'node',
      'rules',
      'rule',
      'suggestions',
      'rebalanceHints',
      'schedulingHistory',
      'decision',
      'pendingPods',
      'schedulerStatus',
      'simulateRule',
    ]) {
      expect(query[f], f).toBeDefined();
    }
    const events = schema.getSubscriptionType()?.getFields()['schedulingEvents'];
    // Pothos loses argument types when resolve comes before subscribe: the args must be there.
    expect(events?.args.map((a) => `${a.name}: ${String(a.type)}`)).toEqual([
      'namespace: String',
      'node: String',
    ]);
    expect(
      schema
        .getSubscriptionType()
        ?.getFields()
        ['nodeLoadUpdates']?.args.map((a) => a.name),
    ).toEqual(['names']);
  });
});
