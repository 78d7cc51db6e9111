/**
 * From a parsed AdmissionReview request to the review to send back, for each route. No express, no
 * client: the cluster state comes in through WebhookState, so these are tested with plain data.
 */
import type { NodeInfo } from '../cluster/model.js';
import { DAEMONSET_ANNOTATION, DAEMONSET_ANNOTATION_VALUE } from '../rules/daemonset.js';
import { rulesForPod, someNodeAllowed, toRule } from '../rules/rule.js';
import { type NodeLoadRule, RULE_GROUP, RULE_KIND } from '../rules/types.js';
import { type DaemonSetClaim, daemonSetAnnotationRefusal, daemonSetClaim } from './daemonset.js';
import { optedOut, unsupportedReasons } from './gate.js';
import { annotationPatch, type MutationOptions, mutatePod } from './mutate.js';
import { type PatchMemo, steeringKey, withUid } from './patch-memo.js';
import {
  type AdmissionRequest,
  type AdmissionReviewResponse,
  allow,
  deny,
  isPod,
  type PatchOperation,
  type PodObject,
  parsePod,
  patched,
} from './review.js';
import { BREAK_GLASS_LABEL, breaksGlass, ruleWarnings, validatePinnedPod } from './validate.js';

/** What the webhook needs from the cluster cache. */
export interface WebhookState {
  /** False until rules and nodes were listed once; before that the webhook cannot judge. */
  ready(): boolean;
  rules(): Iterable<NodeLoadRule>;
  nodes(): ReadonlyMap<string, NodeInfo>;
  /**
   * A namespace's labels, if known: only for the opt-out label, as defence in depth — the webhook
   * configuration's namespaceSelector already keeps the API server from calling us for an opted-out
   * namespace (an AdmissionReview carries no namespace labels). Undefined: not known, no opinion.
   */
  namespaceLabels?(namespace: string): Readonly<Record<string, string>> | undefined;
  /** The DeviceClass serving an extended resource through DRA (the gate leaves such pods out). */
  deviceClassFor?(resource: string): string | undefined;
  /** Steering answers by their inputs (patch-memo.ts); its owner clears it whenever a rule changes. */
  patchMemo?: PatchMemo<string[]>;
}

export interface AdmitOptions extends MutationOptions {
  /** Namespaces the webhook never touches (kube-system, its own); the namespaceSelector should already skip them. */
  excludedNamespaces: ReadonlySet<string>;
}

export type AdmissionResult = 'allowed' | 'patched' | 'denied';

/** A pod the capability gate kept from nodeload's scheduler, for its NotSteered Event once it exists. */
export interface NotSteered {
  namespace: string;
  /** Empty when the API server has not generated the name yet (generateName). */
  name: string;
  generateName: string;
  reasons: string[];
}

export interface Admission {
  review: AdmissionReviewResponse;
  /** The review already serialised (patch-memo.ts), when the memo answered. */
  text?: string;
  result: AdmissionResult;
  /** Set when the decision is worth a log line (a patch or a denial at info, a break-glass at warn). */
  event?: { msg: string; fields: Record<string, unknown>; level?: 'debug' | 'info' | 'warn' };
  /** A pinned pod allowed despite its rules by the break-glass label. */
  breakGlass?: boolean;
  /** Set when a pod covered by rules was not steered by the gate (never for a dry run: no pod will exist). */
  notSteered?: NotSteered;
}

function allowed(review: AdmissionReviewResponse): Admission {
  return { review, result: 'allowed' };
}

function denied(uid: string, code: number, message: string): Admission {
  return { review: deny(uid, code, message), result: 'denied' };
}

/** "ns/name", or "ns/prefix*" for a pod whose name the API server has not generated yet. */
export function podRef(namespace: string, pod: PodObject, requestName?: string | null): string {
  const name =
    pod.metadata.name || requestName || (pod.metadata.generateName ? `${pod.metadata.generateName}*` : '');
  return `${namespace}/${name}`;
}

function podNamespace(request: AdmissionRequest, pod: PodObject): string {
  return request.namespace || pod.metadata.namespace || '';
}

type PodGate = { pod: PodObject; namespace: string } | { done: Admission };

/** The checks both routes share before looking at rules. */
function podGate(request: AdmissionRequest, opts: AdmitOptions): PodGate {
  if (request.operation !== 'CREATE') return { done: allowed(allow(request.uid)) };
  const parsed = parsePod(request.object);
  if (!parsed.ok) return { done: denied(request.uid, 400, parsed.message) };
  const namespace = podNamespace(request, parsed.pod);
  if (!namespace || opts.excludedNamespaces.has(namespace)) return { done: allowed(allow(request.uid)) };
  return { pod: parsed.pod, namespace };
}

function daemonSetPod(uid: string, patch: PatchOperation[]): Admission {
  return { review: patched(uid, patch), result: patch.length > 0 ? 'patched' : 'allowed' };
}

function claimWarnings(claim: DaemonSetClaim): string[] {
  // Warnings beyond ~120 characters may be truncated by clients: keep it short.
  return claim === 'claimed'
    ? ['not created by the DaemonSet controller: its NodeLoadRules apply as to any pod']
    : [];
}

export function admitMutation(request: AdmissionRequest, state: WebhookState, opts: AdmitOptions): Admission {
  const uid = request.uid;
  if (!isPod(request)) return allowed(allow(uid));
  const gate = podGate(request, opts);
  if ('done' in gate) return gate.done;
  const { pod, namespace } = gate;
  // A pinned pod skips the scheduler (validation judges it).
  if (pod.spec.nodeName) return allowed(allow(uid));
  // The DaemonSet controller's pods belong on their node: not steered, only vouched for, so the
  // scheduler exempts them from load thresholds if they come to it (src/rules/daemonset.ts). A pod
  // naming a DaemonSet owner that someone else creates goes on like any pod.
  const claim = daemonSetClaim(pod, request);
  if (claim === 'controller') {
    return daemonSetPod(uid, annotationPatch(pod, { [DAEMONSET_ANNOTATION]: DAEMONSET_ANNOTATION_VALUE }));
  }
  // Opted out (the webhook configuration's selectors should already have kept the request away).
  if (optedOut(pod.metadata.labels) || optedOut(state.namespaceLabels?.(namespace))) {
    return allowed(allow(uid));
  }
  if (!state.ready()) {
    return allowed(allow(uid, ['nodeload: rules not loaded yet (gateway starting); pod not steered']));
  }
  const rules = rulesForPod(state.rules(), { namespace, labels: pod.metadata.labels ?? {} });
  if (rules.length === 0) return allowed(allow(uid));
  const reasons = unsupportedReasons(request.object, state);
  const nodes = state.nodes();
  const steer = () => {
    const mutation = mutatePod(pod, rules, opts, nodes, reasons);
    return {
      value: mutation.changes,
      review: patched(uid, mutation.patch, [...mutation.warnings, ...claimWarnings(claim)]),
    };
  };
  let review: AdmissionReviewResponse;
  let changes: string[];
  let text: string | undefined;
  if (state.patchMemo) {
    const key = steeringKey({
      namespace,
      pod,
      notSteered: reasons,
      claim,
      noNodeAllowed: nodes.size > 0 && !someNodeAllowed(rules, nodes),
    });
    const answer = state.patchMemo.get(key, steer);
    changes = answer.value;
    ({ review, text } = withUid(answer, uid));
  } else {
    ({ value: changes, review } = steer());
  }
  const notSteered: NotSteered | undefined =
    reasons.length > 0 && request.dryRun !== true
      ? {
          namespace,
          name: pod.metadata.name || request.name || '',
          generateName: pod.metadata.generateName ?? '',
          reasons,
        }
      : undefined;
  const ref = podRef(namespace, pod, request.name);
  const ruleNames = rules.map((r) => r.name);
  // Who claimed a DaemonSet owner without being its controller: worth finding in the log.
  const claimedBy = claim === 'claimed' ? { daemonSetClaimedBy: request.userInfo?.username ?? '' } : {};
  if (changes.length === 0) {
    return { review, ...(text ? { text } : {}), result: 'allowed', ...(notSteered ? { notSteered } : {}) };
  }
  return {
    review,
    ...(text ? { text } : {}),
    result: 'patched',
    event: reasons.length
      ? {
          msg: 'pod not steered: its scheduler is kept',
          fields: {
            pod: ref,
            rules: ruleNames,
            reasons,
            changes,
            ...claimedBy,
            dryRun: request.dryRun === true,
            uid,
          },
        }
      : {
          // Every pod of a ruled namespace: at debug, or the log is a flood under load (the scheduler's
          // decision and its Scheduled Event say where the pod went and why) — unless someone other than
          // the DaemonSet controller claimed a DaemonSet owner.
          msg: 'pod steered to its rules',
          level: claim === 'claimed' ? 'info' : 'debug',
          fields: {
            pod: ref,
            rules: ruleNames,
            changes,
            ...claimedBy,
            dryRun: request.dryRun === true,
            uid,
          },
        },
    ...(notSteered ? { notSteered } : {}),
  };
}

/** A pinned pod let through by the break-glass label: said to the client, the log and the metric. */
function brokeGlass(
  request: AdmissionRequest,
  pod: PodObject,
  namespace: string,
  rules: string[],
  refusal: string,
): Admission {
  const node = pod.spec.nodeName ?? '';
  const despite = rules.length ? rules.map((r) => `NodeLoadRule "${r}"`).join(', ') : 'unloaded rules';
  return {
    review: allow(request.uid, [
      `break-glass (${BREAK_GLASS_LABEL}): pinned to "${node}" despite ${despite}`,
    ]),
    result: 'allowed',
    breakGlass: true,
    event: {
      msg: 'pinned pod allowed by break-glass',
      level: 'warn',
      fields: {
        pod: podRef(namespace, pod, request.name),
        node,
        rules,
        refusal,
        user: request.userInfo?.username ?? '',
        dryRun: request.dryRun === true,
        uid: request.uid,
      },
    },
  };
}

function admitPinnedPod(request: AdmissionRequest, state: WebhookState, opts: AdmitOptions): Admission {
  const uid = request.uid;
  const gate = podGate(request, opts);
  if ('done' in gate) return gate.done;
  const { pod, namespace } = gate;
  const nodeName = pod.spec.nodeName;
  if (!nodeName) return allowed(allow(uid));
  const glass = breaksGlass(pod.metadata.labels);
  if (!state.ready()) {
    // Break-glass is for when things are broken: it does not wait for the rules either.
    if (glass) return brokeGlass(request, pod, namespace, [], 'rules not loaded yet (gateway starting)');
    return denied(
      uid,
      503,
      'nodeload: rules not loaded yet (gateway starting); cannot check a pinned pod, retry shortly',
    );
  }
  const rules = rulesForPod(state.rules(), { namespace, labels: pod.metadata.labels ?? {} });
  const verdict = validatePinnedPod(nodeName, rules, state.nodes());
  if (verdict.allowed) return allowed(allow(uid));
  if (glass) return brokeGlass(request, pod, namespace, verdict.refusedBy, verdict.message);
  return {
    ...denied(uid, 403, verdict.message),
    event: {
      msg: 'pinned pod denied',
      fields: {
        pod: podRef(namespace, pod, request.name),
        node: nodeName,
        rules: rules.map((r) => r.name),
        uid,
      },
    },
  };
}

function isRule(request: AdmissionRequest): boolean {
  return request.kind.group === RULE_GROUP && request.kind.kind === RULE_KIND && !request.subResource;
}

function admitRule(request: AdmissionRequest, state: WebhookState): Admission {
  const uid = request.uid;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed(allow(uid));
  const object = request.object;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    return denied(
      uid,
      400,
      `request.object: expected the ${RULE_KIND} being ${request.operation === 'CREATE' ? 'created' : 'updated'}`,
    );
  }
  const rule = toRule(object);
  rule.namespace = request.namespace || rule.namespace;
  rule.name = rule.name || request.name || '';
  const ready = state.ready();
  const others = ready
    ? [...state.rules()].filter((r) => r.namespace === rule.namespace && r.name !== rule.name)
    : [];
  const nodes = ready ? [...state.nodes().values()] : undefined;
  return allowed(allow(uid, ruleWarnings(rule, others, nodes)));
}

/** Only the mutating webhook writes DAEMONSET_ANNOTATION (daemonset.ts): refuse it from anyone else. */
function guardDaemonSetAnnotation(request: AdmissionRequest): Admission | undefined {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return undefined;
  // A pod that does not parse is refused by the pinned-pod check (CREATE) or cannot carry it (UPDATE).
  const parsed = parsePod(request.object);
  if (!parsed.ok) return undefined;
  const old = request.operation === 'UPDATE' ? parsePod(request.oldObject) : undefined;
  const why = daemonSetAnnotationRefusal(request, parsed.pod, old?.ok ? old.pod : undefined);
  if (!why) return undefined;
  return {
    ...denied(request.uid, 403, why),
    event: {
      msg: 'DaemonSet annotation refused',
      fields: {
        pod: podRef(podNamespace(request, parsed.pod), parsed.pod, request.name),
        operation: request.operation,
        user: request.userInfo?.username ?? '',
        uid: request.uid,
      },
    },
  };
}

export function admitValidation(
  request: AdmissionRequest,
  state: WebhookState,
  opts: AdmitOptions,
): Admission {
  if (isPod(request)) return guardDaemonSetAnnotation(request) ?? admitPinnedPod(request, state, opts);
  if (isRule(request)) return admitRule(request, state);
  return allowed(allow(request.uid));
}
