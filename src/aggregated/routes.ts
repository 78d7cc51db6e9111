/**
 * HTTP surface of the aggregated API on the kube-facing port (discovery, OpenAPI, nodeloads list / get /
 * watch, every request authenticated and authorized first, every error a metav1.Status), and the
 * original's GET /api/node-load on the user-facing port.
 */
import { createHash } from 'node:crypto';
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import { PERMISSIONS } from '../server/access.js';
import type { Logger } from '../server/log.js';
import { requireUserPermission } from '../server/user-auth.js';
import {
  ApiError,
  badRequest,
  failureStatus,
  GROUP,
  GROUP_VERSION,
  methodNotAllowed,
  NODELOADS,
  notAcceptable,
  notFound,
  serviceUnavailable,
} from './api.js';
import { gzipCache, sendJsonBody } from './body.js';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList } from './discovery.js';
import {
  AGGREGATED_DISCOVERY_CONTENT_TYPE,
  negotiateDiscovery,
  negotiateObject,
  type ObjectRendering,
} from './media.js';
import {
  type NodeLoadObject,
  nodeLoadList,
  nodeLoadSummary,
  type ObjectFilter,
  partialObjectMetadata,
} from './nodeloads.js';
import { documentHash, OPENAPI_V3_PATH, openApiV2, openApiV3GroupVersion, openApiV3Root } from './openapi.js';
import { exactName, parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import type { NodeLoadStore } from './store.js';
import { type IncludeObject, nodeLoadTable, parseIncludeObject } from './table.js';
import { defaultWatchTimeoutMs, serveWatch } from './watch.js';
import { listToJson, objectToJson, tableToJson } from './wire.js';

const GROUP_PATH = `/apis/${GROUP}`;
const VERSION_PATH = `/apis/${GROUP_VERSION}`;

/** The paths this API answers (and guards); everything else on the port is left to other components. */
export function isAggregatedApiPath(path: string): boolean {
  return (
    path === '/apis' ||
    path === '/apis/' ||
    path === GROUP_PATH ||
    path.startsWith(`${GROUP_PATH}/`) ||
    path === '/openapi/v2' ||
    path === '/openapi/v3' ||
    path.startsWith('/openapi/v3/')
  );
}

type Query = Record<string, string | undefined>;

function query(req: Request): Query {
  const out: Query = {};
  for (const [k, v] of Object.entries(req.query))
    out[k] = Array.isArray(v) ? String(v[0]) : v === undefined ? undefined : String(v);
  return out;
}

function truthy(v: string | undefined): boolean {
  return v === 'true' || v === '1';
}

function nonNegativeInt(q: Query, key: string): number | undefined {
  const v = q[key];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw badRequest(`${key}: Invalid value: "${v}": must be a non-negative integer`);
  return Number(v);
}

function selectors(q: Query, pathName: string | undefined): ObjectFilter {
  try {
    const fields = parseFieldSelector(q['fieldSelector']);
    if (pathName !== undefined) fields.push({ field: 'metadata.name', operator: 'Equals', value: pathName });
    return { labels: parseLabelSelector(q['labelSelector']), fields };
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(err.message);
    throw err;
  }
}

/** JSON with an ETag; a matching If-None-Match gets 304 (the aggregator revalidates discovery and OpenAPI). */
function sendCacheable(req: Request, res: Response, body: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(body);
  const etag = `"${createHash('sha256').update(text).digest('hex')}"`;
  res.setHeader('ETag', etag);
  res.setHeader('Vary', 'Accept');
  res.setHeader('Cache-Control', 'no-cache, private');
  if (req.get('if-none-match') === etag) {
    res.status(304).end();
    return;
  }
  res.status(200).setHeader('Content-Type', contentType);
  // A Buffer, so express leaves the content type as set (no "; charset=utf-8" appended).
  res.send(Buffer.from(text));
}

function sendJson(res: Response, body: unknown, status = 200): void {
  sendJsonText(res, JSON.stringify(body), status);
}

/** Already serialised JSON (wire.ts) as a Buffer, so express appends no charset. */
function sendJsonText(res: Response, text: string | Buffer, status = 200): void {
  res.status(status).setHeader('Content-Type', 'application/json');
  res.send(typeof text === 'string' ? Buffer.from(text) : text);
}

export interface KubeRoutesOptions {
  store: NodeLoadStore;
  authenticate: RequestHandler;
  authorize: RequestHandler;
  log: Logger;
  /**
   * Whether the objects reflect the cluster yet; until then resource requests get 503 rather than an
   * empty list that looks like a cluster without nodes (discovery and OpenAPI are always served).
   */
  ready?: () => boolean;
  now?: () => number;
  /** How long a watch without timeoutSeconds lasts (default: 30–60 min, as the apiserver). */
  watchTimeoutMs?: () => number;
  bookmarkIntervalMs?: number;
}

export function kubeRoutes(opts: KubeRoutesOptions): Router {
  const { store, log } = opts;
  const now = opts.now ?? Date.now;
  const router = express.Router();
  const compress = gzipCache();

  router.use((req, _res, next) => (isAggregatedApiPath(req.path) ? next() : next('router')));
  router.use(opts.authenticate, opts.authorize);

  router.get('/apis', (req, res) => {
    const rendering = negotiateDiscovery(req.get('accept'));
    if (!rendering) throw notAcceptable(req.get('accept') ?? '');
    if (rendering === 'legacy') return sendCacheable(req, res, apiGroupList());
    sendCacheable(req, res, aggregatedDiscovery(rendering), AGGREGATED_DISCOVERY_CONTENT_TYPE(rendering));
  });
  router.get(GROUP_PATH, (req, res) => sendCacheable(req, res, apiGroup()));
  router.get(VERSION_PATH, (req, res) => sendCacheable(req, res, apiResourceList()));

  const v2 = openApiV2();
  const v3 = openApiV3GroupVersion();
  const v3Root = openApiV3Root(documentHash(v3));
  router.get('/openapi/v2', (req, res) => sendCacheable(req, res, v2));
  router.get('/openapi/v3', (req, res) => sendCacheable(req, res, v3Root));
  router.get(`/openapi/v3/${OPENAPI_V3_PATH}`, (req, res) => sendCacheable(req, res, v3));

  const render = (rendering: ObjectRendering, include: IncludeObject) => (obj: NodeLoadObject) => {
    if (rendering.as === 'Object') return obj;
    if (rendering.as === 'PartialObjectMetadata') return partialObjectMetadata(obj);
    return nodeLoadTable([obj], {
      version: rendering.version,
      includeObject: include,
      now: now(),
      metadata: { resourceVersion: obj.metadata.resourceVersion },
    });
  };

  const negotiated = (req: Request): ObjectRendering => {
    if (opts.ready && !opts.ready()) {
      throw serviceUnavailable('nodeload is still syncing with the API server; retry shortly');
    }
    const rendering = negotiateObject(req.get('accept'));
    if (!rendering) throw notAcceptable(req.get('accept') ?? '');
    return rendering;
  };

  const listOrWatch = (req: Request, res: Response, watchPath: boolean, pathName?: string) => {
    const q = query(req);
    const rendering = negotiated(req);
    const include = parseIncludeObject(q['includeObject']);
    const filter = selectors(q, pathName);
    if (watchPath || truthy(q['watch'])) {
      const timeoutSeconds = nonNegativeInt(q, 'timeoutSeconds');
      serveWatch(res, store, {
        filter,
        resourceVersion: q['resourceVersion'],
        sendInitialEvents: q['sendInitialEvents'] === undefined ? undefined : truthy(q['sendInitialEvents']),
        allowBookmarks: truthy(q['allowWatchBookmarks']) && rendering.as !== 'Table',
        timeoutMs: timeoutSeconds ? timeoutSeconds * 1000 : (opts.watchTimeoutMs ?? defaultWatchTimeoutMs)(),
        render: render(rendering, include),
        bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
      });
      return;
    }
    // A single name in the field selector needs no scan (kubectl get <name> -w, informers on one object).
    const name = exactName(filter.fields);
    const candidates = name === undefined ? store.list() : [store.get(name)].filter((o) => o !== undefined);
    const list = nodeLoadList(candidates, filter, store.resourceVersion, {
      limit: nonNegativeInt(q, 'limit'),
      continue: q['continue'] || undefined,
    });
    const send = (pieces: readonly Buffer[]) =>
      sendJsonBody(res, {
        pieces,
        acceptEncoding: req.get('accept-encoding'),
        cacheKey: `${JSON.stringify(rendering)} ${include} ${req.originalUrl}`,
        compress,
      });
    if (rendering.as === 'Object') return send(listToJson(list));
    if (rendering.as === 'PartialObjectMetadata') {
      return sendJson(res, {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${rendering.version}`,
        metadata: list.metadata,
        items: list.items.map(partialObjectMetadata),
      });
    }
    return send(
      tableToJson(list.items, {
        version: rendering.version,
        includeObject: include,
        now: now(),
        metadata: list.metadata,
      }),
    );
  };

  const collection = `${VERSION_PATH}/${NODELOADS.plural}`;
  router.get(collection, (req, res) => listOrWatch(req, res, false));
  router.get(`${VERSION_PATH}/watch/${NODELOADS.plural}`, (req, res) => listOrWatch(req, res, true));
  router.get(`${VERSION_PATH}/watch/${NODELOADS.plural}/:name`, (req, res) =>
    listOrWatch(req, res, true, String(req.params['name'])),
  );
  router.get(`${collection}/:name`, (req, res) => {
    const rendering = negotiated(req);
    const include = parseIncludeObject(query(req)['includeObject']);
    const name = String(req.params['name']);
    const obj = store.get(name);
    if (!obj) throw notFound(NODELOADS, name);
    if (rendering.as === 'Object') return sendJsonText(res, objectToJson(obj));
    sendJson(res, render(rendering, include)(obj));
  });
  router.all([collection, `${collection}/:name`], (req) => {
    throw methodNotAllowed(req.method);
  });

  router.use(() => {
    throw new ApiError(failureStatus(404, 'NotFound', 'the server could not find the requested resource'));
  });
  router.use(statusErrors(log));
  return router;
}

/** Errors as metav1.Status; anything unexpected is logged and answered 500 without details. */
function statusErrors(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) {
      log.warn({ err, path: req.path }, 'aggregated API response failed after it started');
      res.end();
      return;
    }
    if (err instanceof ApiError) return sendJson(res, err.status, err.code);
    log.error({ err, method: req.method, path: req.path }, 'aggregated API request failed');
    sendJson(
      res,
      failureStatus(500, 'InternalError', 'an error on the server has prevented the request from succeeding'),
      500,
    );
  };
}

/**
 * GET /api/node-load: the original's `{nodes: [{name, cpu, memory}]}` with the load figures added; node
 * data, so it needs `list nodes` (403 otherwise).
 */
export function userRoutes(store: NodeLoadStore): Router {
  const router = express.Router();
  router.get('/api/node-load', requireUserPermission(PERMISSIONS.listNodes), (_req, res) => {
    const nodes = [...store.list()]
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0))
      .map(nodeLoadSummary);
    res.json({ nodes });
  });
  return router;
}
