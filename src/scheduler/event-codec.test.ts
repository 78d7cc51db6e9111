import { describe, expect, it } from 'vitest';
import {
  DECISION_ANNOTATION,
  decisionEvent,
  decisionFromEvent,
  EVENT_FEASIBLE_CANDIDATES,
  encodeDecision,
  MAX_NOTE_BYTES,
  truncateBytes,
} from './event-codec.js';
import {
  buildCandidates,
  type Decision,
  decisionRules,
  keyCandidates,
  settleScores,
  unschedulableMessage,
} from './explain.js';
import { defaultProfile, NOW, node, pod, rule, decide as runDecide } from './testing.js';

function decide(nodeCount: number, allowed: string[], burst = false): Decision {
  const nodes = Array.from({ length: nodeCount }, (_, i) => node(`node-${String(i).padStart(4, '0')}`));
  const rules = [
    rule('web', {
      allowedNodes: allowed,
      ...(burst ? { burst: { maxPlacements: 5, windowSeconds: 30 } } : {}),
    }),
  ];
  const { verdicts, ranked } = runDecide(pod('p', { cpu: '500m', memory: '1Gi' }), {
    nodes,
    pods: [pod('b', { nodeName: 'node-0001', cpu: '1' })],
    rules,
    profile: defaultProfile({ placements: { placements: () => 1 } }),
  });
  const best = ranked[0]?.node;
  return {
    id: 'dec-1',
    namespace: 'default',
    pod: 'p',
    podUid: 'uid-p',
    result: best ? 'scheduled' : 'unschedulable',
    ...(best ? { node: best } : {}),
    time: new Date(NOW).toISOString(),
    algorithmMs: 0.42,
    latencyMs: 12.5,
    e2eLatencyMs: 40,
    attempts: 2,
    message: best
      ? `Successfully assigned default/p to ${best}`
      : unschedulableMessage(nodes.length, verdicts),
    rules: decisionRules(rules),
    totalNodes: nodes.length,
    feasibleNodes: ranked.length,
    candidates: buildCandidates(verdicts, ranked),
    reportingInstance: 'nodeload-scheduler-gw-1',
  };
}

/** What the API server returns: the annotation and fields written, eventTime as a string. */
function asStoredEvent(d: Decision): unknown {
  const ev = decisionEvent(d);
  return {
    metadata: { name: 'p.123', namespace: ev.namespace, annotations: ev.annotations },
    eventTime: '2026-11-29T12:00:00.000000Z',
    reportingController: 'nodeload-scheduler',
    reportingInstance: 'nodeload-scheduler-gw-1',
    action: ev.action,
    reason: ev.reason,
    type: ev.type,
    note: ev.note,
    regarding: ev.regarding,
  };
}

describe('decision events', () => {
  it('round-trips a decision through its Event', () => {
    const d = decide(5, ['node-0001', 'node-0002', 'node-0003'], true);
    const back = decisionFromEvent(asStoredEvent(d));
    expect(back).toBeDefined();
    const { rebuilt, ...rest } = back as Decision;
    expect(rebuilt).toBe(true);
    // Scores and margins are kept to 2 decimals; compare with the same rounding (and with the score
    // parts built, as the decoded ones are).
    // The Event keeps the key candidates: here the 3 feasible nodes and one of the two outside
    // allowedNodes (same reason); the other is counted as omitted.
    for (const c of d.candidates) settleScores(c);
    const round = (x: unknown) =>
      JSON.parse(JSON.stringify(x, (_k, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)));
    expect(round(rest)).toEqual(
      round({ ...d, candidates: keyCandidates(d.candidates), candidatesOmitted: 1 }),
    );
    expect(rest.candidates.map((c) => c.node)).toEqual([
      ...d.candidates.filter((c) => c.feasible).map((c) => c.node),
      'node-0000',
    ]);
    // Unresolvable reasons (outside allowedNodes) stay unresolvable after a restart.
    const notAllowed = back?.candidates.find((c) => c.node === 'node-0000')?.reasons[0];
    expect(notAllowed).toMatchObject({ plugin: 'NodeLoadRules', code: 'RuleNotAllowed', unresolvable: true });
  });

  it.each([
    {
      what: 'a preemption that nominated a node, with its victims',
      preemption: {
        node: 'node-0001',
        victims: [{ namespace: 'default', name: 'low', priority: 10 }],
        message: 'preempting 1 pod(s) on node node-0001: default/low (priority 10).',
      },
    },
    {
      what: 'one that could not help',
      preemption: {
        victims: [],
        message: 'preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
      },
    },
  ])('carries what preemption did through a restart: $what', ({ preemption }) => {
    const d: Decision = { ...decide(2, []), preemption };
    expect(decisionFromEvent(asStoredEvent(d))?.preemption).toEqual(preemption);
    expect(decisionFromEvent(asStoredEvent(decide(2, [])))?.preemption).toBeUndefined();
  });

  it('carries the engine of an extender decision through a restart; native is the default', () => {
    const d: Decision = { ...decide(2, []), engine: 'extender' };
    expect(decisionFromEvent(asStoredEvent(d))?.engine).toBe('extender');
    expect(decisionFromEvent(asStoredEvent(decide(2, [])))?.engine).toBeUndefined();
  });

  it('writes Scheduled/Normal and FailedScheduling/Warning like kube-scheduler', () => {
    const ok = decisionEvent(decide(2, []));
    expect(ok).toMatchObject({ reason: 'Scheduled', action: 'Binding', type: 'Normal' });
    expect(ok.note).toMatch(/^Successfully assigned default\/p to node-000/);
    const failed = decisionEvent(decide(3, ['elsewhere']));
    expect(failed).toMatchObject({ reason: 'FailedScheduling', action: 'Scheduling', type: 'Warning' });
    expect(failed.note).toBe('0/3 nodes are available: 3 node(s) not allowed by rule web.');
    expect(failed.regarding).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'default',
      name: 'p',
      uid: 'uid-p',
    });
  });

  it('caps the annotation, keeping feasible nodes first and one node per distinct reason', () => {
    const allowed = Array.from({ length: 40 }, (_, i) => `node-${String(i).padStart(4, '0')}`);
    const d = decide(2000, allowed);
    // Uncapped: the 3 best feasible nodes (the chosen one first) and one outside allowedNodes, the
    // other 1,996 omitted; the in-memory history keeps 10 feasible, the Event fewer.
    const full = JSON.parse(encodeDecision(d)) as { c: unknown[][]; om: number };
    expect(full.c.map((c) => c[0])).toEqual([
      ...keyCandidates(d.candidates, EVENT_FEASIBLE_CANDIDATES).map((c) => c.node),
    ]);
    expect(full.c).toHaveLength(EVENT_FEASIBLE_CANDIDATES + 1);
    expect(full.c[0]?.[0]).toBe(d.node);
    expect(full.om).toBe(2000 - EVENT_FEASIBLE_CANDIDATES - 1);
    expect(keyCandidates(d.candidates).length).toBeGreaterThan(full.c.length);
    const json = encodeDecision(d, 900);
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(900);
    // As many as fit: the room left is less than one more candidate would take.
    const items = (JSON.parse(json) as { c: unknown[] }).c;
    expect(items.length).toBeLessThan(full.c.length);
    const largest = Math.max(...items.map((c) => Buffer.byteLength(JSON.stringify(c))));
    expect(900 - Buffer.byteLength(json)).toBeLessThan(largest + 1);
    const back = decisionFromEvent({
      reason: 'Scheduled',
      note: d.message,
      regarding: { name: 'p', namespace: 'default' },
      metadata: { annotations: { [DECISION_ANNOTATION]: json } },
    }) as Decision;
    expect(back.candidates.length).toBeGreaterThan(0);
    expect(back.candidates.length + (back.candidatesOmitted ?? 0)).toBe(2000);
    expect(back.candidates[0]?.node).toBe(d.node);
    expect(back.totalNodes).toBe(2000);
  });

  it('keeps the note within 1 KB', () => {
    const d = { ...decide(2, []), message: `0/9 nodes are available: ${'x'.repeat(3000)}.` };
    expect(Buffer.byteLength(decisionEvent(d).note)).toBeLessThanOrEqual(MAX_NOTE_BYTES);
    expect(decisionFromEvent(asStoredEvent(d))?.message).toMatch(/^0\/9 nodes are available: x{100}/);
  });

  it('recovers the outline of an Event without the annotation', () => {
    const d = decisionFromEvent({
      reason: 'Scheduled',
      note: 'Successfully assigned ns/web-1 to n7',
      eventTime: '2026-11-29T12:00:00.000000Z',
      regarding: { name: 'web-1', namespace: 'ns', uid: 'u' },
      metadata: { uid: 'ev-uid' },
      reportingInstance: 'old',
    });
    expect(d).toMatchObject({
      id: 'event-ev-uid',
      result: 'scheduled',
      node: 'n7',
      pod: 'web-1',
      namespace: 'ns',
      candidates: [],
    });
  });

  it('ignores Events of other reasons', () => {
    expect(decisionFromEvent({ reason: 'Pulled' })).toBeUndefined();
  });
});

describe('truncateBytes', () => {
  it('cuts on characters, never exceeding the byte budget', () => {
    const s = 'ä'.repeat(10);
    const cut = truncateBytes(s, 9);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(9);
    expect(cut.endsWith('…')).toBe(true);
    expect(truncateBytes('short', 9)).toBe('short');
  });
});
