/**
 * The steering answers already computed, by what they were computed from. A Deployment's pods reach
 * the webhook with the same namespace, labels, affinity and annotations, so they get the same patch: a
 * rule allowing 40 nodes makes it 40 node-affinity terms, ~11 KB once base64'd, and building, encoding
 * and serialising that again for every pod cost more server CPU than reading the review did.
 *
 * The key is the exact JSON of every input the patch and its warnings depend on (mutate.ts), so two
 * reviews share an entry only when they would get the same answer. Entries keep the serialised review
 * split around its uid: a hit joins the two halves around the new uid into one string, which Node writes
 * with the response's header block in one piece. (Kept as Buffers, the answer went out as a gathered
 * write of the header string and the body Buffer — writev through TLS — and the webhook bench's CPU
 * profile put 1.2 s per 10,000 reviews there, against 0.46 s for the same bytes written as one string.)
 * Rules changing empties the memo (clear()).
 */
import { STEERING_ANNOTATIONS } from './mutate.js';
import type { AdmissionReviewResponse, PodObject } from './review.js';

const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';

export interface SteeringInputs {
  namespace: string;
  pod: PodObject;
  /** The capability gate's reasons (gate.ts): not steered when non-empty. */
  notSteered: readonly string[];
  /** daemonset.ts's claim on the pod: 'claimed' adds a warning. */
  claim: string;
  /** Whether the rules covering the pod allow no current node (a warning). */
  noNodeAllowed: boolean;
}

/** The memo key: the JSON of every input, in a fixed order. */
export function steeringKey(i: SteeringInputs): string {
  const { metadata, spec } = i.pod;
  const affinity = spec.affinity;
  const annotations = metadata.annotations;
  return JSON.stringify([
    i.namespace,
    metadata.labels ?? null,
    spec.schedulerName ?? null,
    i.notSteered,
    i.claim,
    i.noNodeAllowed,
    // Which of affinity / nodeAffinity / required exist decides the patch's path; the terms, its value.
    affinity ? (affinity.nodeAffinity ? (affinity.nodeAffinity[REQUIRED] ?? 0) : 1) : 2,
    // The patch compares the steering annotations' current values with the ones it wants.
    annotations ? STEERING_ANNOTATIONS.map((k) => annotations[k] ?? null) : null,
  ]);
}

export interface SteeringAnswer<T> {
  /** What the caller keeps besides the review (admit.ts: the patch's changes, for the log). */
  value: T;
  /** The review as computed for the first pod; its uid is replaced per request. */
  review: AdmissionReviewResponse;
  /** The serialised review up to its uid's value, and from after it. */
  head: string;
  tail: string;
}

/** Bounded, least recently used first out. */
export class PatchMemo<T> {
  private readonly entries = new Map<string, SteeringAnswer<T>>();
  hits = 0;
  misses = 0;

  constructor(private readonly capacity = 128) {}

  get(key: string, compute: () => { value: T; review: AdmissionReviewResponse }): SteeringAnswer<T> {
    const found = this.entries.get(key);
    if (found) {
      this.hits++;
      this.entries.delete(key);
      this.entries.set(key, found);
      return found;
    }
    this.misses++;
    const { value, review } = compute();
    const text = JSON.stringify(review);
    const uid = JSON.stringify(review.response.uid);
    const at = text.indexOf(`"uid":${uid}`) + '"uid":'.length;
    const answer = {
      value,
      review,
      head: text.slice(0, at),
      tail: text.slice(at + uid.length),
    };
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    this.entries.set(key, answer);
    return answer;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The memo's review for another request: its uid in the object and in the serialised bytes. */
export function withUid<T>(
  answer: SteeringAnswer<T>,
  uid: string,
): { review: AdmissionReviewResponse; text: string } {
  const text = answer.head + JSON.stringify(uid) + answer.tail;
  return { review: { ...answer.review, response: { ...answer.review.response, uid } }, text };
}
