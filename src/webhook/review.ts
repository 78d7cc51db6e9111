/**
 * The AdmissionReview wire format (admission.k8s.io/v1): parsing what the API server sends and
 * building what it expects back. Only the fields the webhook reads are validated; anything else in
 * the object is ignored, so a strange container spec never makes the webhook fail.
 */
import { z } from 'zod';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

const stringMap = z.record(z.string(), z.string());

/**
 * Terms and requirements keep only the fields Kubernetes defines (z.object strips the rest): the
 * webhook sends them back in its patch, and the API server never sends unknown fields in a built-in type.
 */
const nodeSelectorRequirement = z.object({
  key: z.string(),
  operator: z.string(),
  values: z.array(z.string()).nullish(),
});
const nodeSelectorTerm = z.object({
  matchExpressions: z.array(nodeSelectorRequirement).nullish(),
  matchFields: z.array(nodeSelectorRequirement).nullish(),
});

export const PodObjectSchema = z.object({
  metadata: z.object({
    name: z.string().nullish(),
    generateName: z.string().nullish(),
    namespace: z.string().nullish(),
    labels: stringMap.nullish(),
    annotations: stringMap.nullish(),
    ownerReferences: z
      .array(
        z.object({
          apiVersion: z.string().nullish(),
          kind: z.string().nullish(),
          name: z.string().nullish(),
          controller: z.boolean().nullish(),
        }),
      )
      .nullish(),
  }),
  spec: z.object({
    nodeName: z.string().nullish(),
    schedulerName: z.string().nullish(),
    affinity: z
      .object({
        nodeAffinity: z
          .object({
            requiredDuringSchedulingIgnoredDuringExecution: z
              .object({ nodeSelectorTerms: z.array(nodeSelectorTerm).nullish() })
              .nullish(),
          })
          .nullish(),
      })
      .nullish(),
  }),
});

/**
 * A pod as the webhook sees it: only the fields it reads (z.object strips the rest, so nothing the
 * client sent beyond them — a "__proto__" key included — reaches the decision or the patch).
 */
export type PodObject = z.infer<typeof PodObjectSchema>;
export type PodNodeSelectorTerm = z.infer<typeof nodeSelectorTerm>;
export type PodNodeSelectorRequirement = z.infer<typeof nodeSelectorRequirement>;

const groupVersionKind = z.object({ group: z.string(), version: z.string(), kind: z.string() });
const groupVersionResource = z.object({ group: z.string(), version: z.string(), resource: z.string() });

const AdmissionRequestSchema = z.object({
  uid: z.string(),
  kind: groupVersionKind,
  resource: groupVersionResource,
  subResource: z.string().nullish(),
  name: z.string().nullish(),
  namespace: z.string().nullish(),
  operation: z.enum(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']),
  dryRun: z.boolean().nullish(),
  /**
   * Who sends the request: the DaemonSet exemption depends on it (daemonset.ts). One the API server
   * would never send counts as an unknown user — no exemption — rather than failing the request.
   */
  userInfo: z
    .object({ username: z.string().nullish(), groups: z.array(z.string()).nullish() })
    .nullish()
    .catch(undefined),
  object: z.unknown().optional(),
  oldObject: z.unknown().optional(),
});

export type AdmissionRequest = z.infer<typeof AdmissionRequestSchema>;

export interface AdmissionStatus {
  code: number;
  message: string;
  reason?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patchType?: 'JSONPatch';
  patch?: string;
  warnings?: string[];
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  response: AdmissionResponse;
}

/**
 * What a request body turned out to be:
 * - `bad`: not an AdmissionReview we can answer (no uid to echo, or another version) → HTTP 4xx;
 * - `malformed`: a review with a uid whose request is broken → an explicit denial echoing the uid;
 * - `ok`: a well-formed request.
 */
export type ParsedReview =
  | { kind: 'bad'; status: number; message: string }
  | { kind: 'malformed'; uid: string; message: string }
  | { kind: 'ok'; request: AdmissionRequest };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** "request.kind.group: expected string", at most three, so a huge broken body gives a short message. */
export function describeIssues(error: z.ZodError, prefix: string): string {
  const shown = error.issues.slice(0, 3).map((i) => {
    const path = [prefix, ...i.path.map(String)].filter(Boolean).join('.');
    return `${path}: ${i.message}`;
  });
  const more = error.issues.length - shown.length;
  return more > 0 ? `${shown.join('; ')} (and ${more} more)` : shown.join('; ');
}

export function parseReview(body: unknown): ParsedReview {
  if (!isObject(body)) {
    return { kind: 'bad', status: 400, message: 'expected a JSON AdmissionReview object' };
  }
  if (body.kind !== ADMISSION_KIND || body.apiVersion !== ADMISSION_API_VERSION) {
    const show = (v: unknown) => (typeof v === 'string' ? v.slice(0, 100) : '?');
    const got = `${show(body.apiVersion)}, Kind=${show(body.kind)}`;
    return {
      kind: 'bad',
      status: 400,
      message: `expected ${ADMISSION_API_VERSION}, Kind=${ADMISSION_KIND}, got ${got} (register the webhook with admissionReviewVersions: [v1])`,
    };
  }
  const req = body.request;
  if (!isObject(req)) return { kind: 'bad', status: 400, message: 'request: expected an object' };
  if (typeof req.uid !== 'string' || req.uid === '') {
    return { kind: 'bad', status: 400, message: 'request.uid: expected a non-empty string' };
  }
  const parsed = AdmissionRequestSchema.safeParse(req);
  if (!parsed.success)
    return { kind: 'malformed', uid: req.uid, message: describeIssues(parsed.error, 'request') };
  return { kind: 'ok', request: parsed.data };
}

export function reviewResponse(response: AdmissionResponse): AdmissionReviewResponse {
  // Built without the empty key rather than deleting it: `delete` turns the object into a dictionary,
  // and the patch memo copies each memoised response once per request (patch-memo.ts).
  const { warnings, ...rest } = response;
  const r: AdmissionResponse = warnings && warnings.length > 0 ? { ...rest, warnings } : rest;
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response: r };
}

export function allow(uid: string, warnings: string[] = []): AdmissionReviewResponse {
  return reviewResponse({ uid, allowed: true, warnings });
}

export function deny(
  uid: string,
  code: number,
  message: string,
  warnings: string[] = [],
): AdmissionReviewResponse {
  const reason =
    code === 403
      ? 'Forbidden'
      : code === 400
        ? 'BadRequest'
        : code === 503
          ? 'ServiceUnavailable'
          : undefined;
  return reviewResponse({
    uid,
    allowed: false,
    status: { code, message, ...(reason ? { reason } : {}) },
    warnings,
  });
}

/** A JSON Patch operation as the API server accepts it. */
export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

export function patched(
  uid: string,
  patch: PatchOperation[],
  warnings: string[] = [],
): AdmissionReviewResponse {
  if (patch.length === 0) return allow(uid, warnings);
  return reviewResponse({
    uid,
    allowed: true,
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
    warnings,
  });
}

/** RFC 6901: "~" → "~0", then "/" → "~1". */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Whether the request is for the core/v1 Pod kind (what the webhook rules register for). */
export function isPod(request: AdmissionRequest): boolean {
  return request.kind.group === '' && request.kind.kind === 'Pod' && !request.subResource;
}

export function parsePod(object: unknown): { ok: true; pod: PodObject } | { ok: false; message: string } {
  const parsed = PodObjectSchema.safeParse(object);
  if (!parsed.success)
    return { ok: false, message: `not a valid Pod: ${describeIssues(parsed.error, 'request.object')}` };
  return { ok: true, pod: parsed.data };
}
