/**
 * The (anti-)affinity terms of the pods already placed, grouped by what the term says and counted per
 * topology domain — what InterPodAffinity reads of the existing pods each cycle (their required
 * anti-affinity in PreFilter; their required affinity and preferred terms in PreScore). Upstream walks
 * every pod with such terms (HavePodsWithRequiredAntiAffinityNodeInfoList) per cycle; here the walk is
 * done once, as pods come and go, so a cycle looks at each distinct term once, however many pods hold it:
 *
 *   group g = (kind, weight, term, owner namespace when the term means "my own namespace")
 *   g.domains[v] = #{(pod E, term t of E in g) : E counted on a node whose label t.topologyKey = v}
 *
 * A pod on a node the snapshot does not know yet, or whose node lacks the topology key, counts nowhere
 * (as upstream, which reads the key from the pod's node). Node label changes re-index that node's pods.
 */
import type { PodAffinityTerm, PodInfo } from '../../cluster/model.js';

export type TermKind =
  | 'requiredAffinity'
  | 'requiredAntiAffinity'
  | 'preferredAffinity'
  | 'preferredAntiAffinity';

export interface TermDomain {
  /** Σ over `pods`. */
  count: number;
  /** Pod key → how many of its terms are in the group (in the order they arrived: the first is a witness). */
  readonly pods: Map<string, number>;
}

export interface TermGroup {
  readonly term: PodAffinityTerm;
  /** The namespace of the pods holding the term (what an empty namespaces list means for it). */
  readonly ownerNamespace: string;
  /** The preferred term's weight; 1 for required terms. */
  readonly weight: number;
  /** Topology value → the terms counted there. */
  readonly domains: Map<string, TermDomain>;
}

const KINDS: readonly TermKind[] = [
  'requiredAffinity',
  'requiredAntiAffinity',
  'preferredAffinity',
  'preferredAntiAffinity',
];

/** A term's JSON, computed once per term object (pods share term objects across updates and assumes). */
const termJson = new WeakMap<PodAffinityTerm, string>();

function groupKey(term: PodAffinityTerm, ownerNamespace: string, weight: number): string {
  let json = termJson.get(term);
  if (json === undefined) {
    json = JSON.stringify([term.labelSelector, term.namespaces, term.namespaceSelector, term.topologyKey]);
    termJson.set(term, json);
  }
  const own = term.namespaces.length === 0 && term.namespaceSelector === undefined;
  return `${weight}|${own ? ownerNamespace : ''}|${json}`;
}

function termsOf(pod: PodInfo, kind: TermKind): readonly { term: PodAffinityTerm; weight: number }[] {
  switch (kind) {
    case 'requiredAffinity':
      return (pod.podAffinity?.required ?? []).map((term) => ({ term, weight: 1 }));
    case 'requiredAntiAffinity':
      return (pod.podAntiAffinity?.required ?? []).map((term) => ({ term, weight: 1 }));
    case 'preferredAffinity':
      return pod.podAffinity?.preferred ?? [];
    case 'preferredAntiAffinity':
      return pod.podAntiAffinity?.preferred ?? [];
  }
}

export function hasTerms(pod: PodInfo): boolean {
  return pod.podAffinity !== undefined || pod.podAntiAffinity !== undefined;
}

export class TermIndex {
  private readonly groups = new Map<TermKind, Map<string, TermGroup>>(KINDS.map((k) => [k, new Map()]));

  /** The groups of one kind (live: read them before the snapshot changes again). */
  of(kind: TermKind): Iterable<TermGroup> {
    return (this.groups.get(kind) as Map<string, TermGroup>).values();
  }

  /** Counts (delta 1) or uncounts (delta −1) the terms of `pod` (key `key`) on a node labelled `labels`. */
  changed(key: string, pod: PodInfo, labels: Readonly<Record<string, string>>, delta: 1 | -1): void {
    if (!hasTerms(pod)) return;
    for (const kind of KINDS) {
      const groups = this.groups.get(kind) as Map<string, TermGroup>;
      for (const { term, weight } of termsOf(pod, kind)) {
        const value = labels[term.topologyKey];
        if (value === undefined) continue;
        const gk = groupKey(term, pod.namespace, weight);
        let g = groups.get(gk);
        if (!g) {
          if (delta < 0) continue;
          g = { term, ownerNamespace: pod.namespace, weight, domains: new Map() };
          groups.set(gk, g);
        }
        let d = g.domains.get(value);
        if (!d) {
          if (delta < 0) continue;
          d = { count: 0, pods: new Map() };
          g.domains.set(value, d);
        }
        const mine = (d.pods.get(key) ?? 0) + delta;
        if (mine > 0) d.pods.set(key, mine);
        else d.pods.delete(key);
        d.count += delta;
        if (d.count <= 0) g.domains.delete(value);
        if (g.domains.size === 0) groups.delete(gk);
      }
    }
  }
}
