/**
 * The nodeload.example.com/v1alpha1 API: its names, and metav1.Status for every error it answers —
 * kubectl shows `Error from server (<reason>): <message>` only when the body is a Status.
 */

export const GROUP = 'nodeload.example.com';
export const VERSION = 'v1alpha1';
export const GROUP_VERSION = `${GROUP}/${VERSION}`;
export const APISERVICE_NAME = `${VERSION}.${GROUP}`;

/** One resource of the group, as discovery and OpenAPI describe it. */
export interface ResourceInfo {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  namespaced: boolean;
  verbs: string[];
  categories: string[];
}

export const NODELOADS: ResourceInfo = {
  plural: 'nodeloads',
  singular: 'nodeload',
  kind: 'NodeLoad',
  listKind: 'NodeLoadList',
  shortNames: ['nl'],
  namespaced: false,
  verbs: ['get', 'list', 'watch'],
  // The NodeLoadRule CRD's category: `kubectl get nodeload` lists rules and loads together.
  categories: ['nodeload'],
};

export const RESOURCES: readonly ResourceInfo[] = [NODELOADS];

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: { reason?: string; message: string; field?: string }[];
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

export function failureStatus(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

/** An error that is answered as the Status it carries. */
export class ApiError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
  }

  get code(): number {
    return this.status.code;
  }
}

export function badRequest(message: string): ApiError {
  return new ApiError(failureStatus(400, 'BadRequest', message));
}

export function notFound(resource: ResourceInfo, name: string): ApiError {
  return new ApiError(
    failureStatus(404, 'NotFound', `${resource.plural}.${GROUP} "${name}" not found`, {
      name,
      group: GROUP,
      kind: resource.plural,
    }),
  );
}

export function unauthorized(): ApiError {
  return new ApiError(failureStatus(401, 'Unauthorized', 'Unauthorized'));
}

export function notAcceptable(accept: string): ApiError {
  return new ApiError(
    failureStatus(
      406,
      'NotAcceptable',
      `only the following media types are accepted: application/json (got "${accept}")`,
    ),
  );
}

export function methodNotAllowed(method: string): ApiError {
  return new ApiError(
    failureStatus(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${method})`,
    ),
  );
}

export function serviceUnavailable(message: string): ApiError {
  return new ApiError(failureStatus(503, 'ServiceUnavailable', message));
}

export function internalError(message: string): ApiError {
  return new ApiError(failureStatus(500, 'InternalError', message));
}
