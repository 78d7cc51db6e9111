/**
 * The operator's writes to the API server: rule status through the status subresource, and
 * events.k8s.io/v1 Events. Kept behind an interface so the reconcile loop can be tested without a
 * cluster.
 */
import {
  CustomObjectsApi,
  EventsV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
} from '@kubernetes/client-node';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION, type RuleStatus } from '../rules/types.js';
import type { eventBody } from './plan.js';

export type EventObject = ReturnType<typeof eventBody>;

export interface RuleWriter {
  /** Merge-patches .status; resolves with the resourceVersion the write produced. */
  patchStatus(namespace: string, name: string, status: RuleStatus): Promise<string>;
  createEvent(event: EventObject): Promise<void>;
  /** Merge-patches an Event's series (a repeat of it); rejects with the API server's 404 when it is gone. */
  patchEventSeries(namespace: string, name: string, series: EventSeriesPatch): Promise<void>;
}

/** events.k8s.io/v1 EventSeries: count ≥ 2, lastObservedTime a MicroTime (6 fractional digits). */
export interface EventSeriesPatch {
  count: number;
  lastObservedTime: string;
}

export class KubeRuleWriter implements RuleWriter {
  private readonly custom: CustomObjectsApi;
  private readonly events: EventsV1Api;

  constructor(kubeConfig: KubeConfig) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.events = kubeConfig.makeApiClient(EventsV1Api);
  }

  async patchStatus(namespace: string, name: string, status: RuleStatus): Promise<string> {
    // A merge patch without resourceVersion: the operator owns .status outright, so there is nothing to conflict with.
    const updated = (await this.custom.patchNamespacedCustomObjectStatus(
      { group: RULE_GROUP, version: RULE_VERSION, plural: RULE_PLURAL, namespace, name, body: { status } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as { metadata?: { resourceVersion?: string } };
    return updated?.metadata?.resourceVersion ?? '';
  }

  async createEvent(event: EventObject): Promise<void> {
    await this.events.createNamespacedEvent({
      namespace: event.metadata.namespace,
      body: { ...event, eventTime: new V1MicroTime(event.eventTime) },
    });
  }

  async patchEventSeries(namespace: string, name: string, series: EventSeriesPatch): Promise<void> {
    await this.events.patchNamespacedEvent(
      { name, namespace, body: { series } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
}

/** The HTTP status of a client-node ApiException, if that is what it is. */
export function httpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The API server's message (ApiException bodies are JSON strings), for logs. */
export function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'body' in err && 'code' in err) {
    try {
      const body = JSON.parse(String((err as { body: unknown }).body)) as { message?: string };
      if (body.message) return `HTTP ${(err as { code: unknown }).code}: ${body.message}`;
    } catch {
      // not JSON
    }
  }
  return err instanceof Error ? err.message : String(err);
}
