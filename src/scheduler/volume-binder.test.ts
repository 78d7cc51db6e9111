/**
 * KubeVolumeBinder against a loopback fake API server: the merge patches it sends (claimRef with the
 * PV's resourceVersion, selected-node), and the rollbacks — undone only while nobody acted on the write,
 * re-read after a 409, left alone once the claim is bound.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claim, pv } from './plugins/volume.testing.js';
import { claimRefPatch, KubeVolumeBinder, selectedNodePatch } from './volume-binder.js';

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON
type Json = any;

interface Request {
  method: string;
  path: string;
  contentType: string;
  body: Json;
}

type Reply = { status: number; body: Json };
let handler: (r: Request) => Reply;
const requests: Request[] = [];
let server: Server;
let binder: KubeVolumeBinder;

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => resolve(data));
  });
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const text = await read(req);
    const r: Request = {
      method: req.method ?? '',
      path: req.url ?? '',
      contentType: String(req.headers['content-type'] ?? ''),
      body: text ? JSON.parse(text) : undefined,
    };
    requests.push(r);
    const out = handler(r);
    res.writeHead(out.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(out.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  const { port } = server.address() as AddressInfo;
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  binder = new KubeVolumeBinder(kc);
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  requests.length = 0;
});

const status = (code: number, message: string): Reply => ({
  status: code,
  body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code },
});
const pvJson = (name: string, rv: string, claimRef?: Json, phase = 'Available') => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, resourceVersion: rv },
  spec: { capacity: { storage: '1Gi' }, claimRef },
  status: { phase },
});
const claimJson = (name: string, rv: string, o: { volumeName?: string; annotations?: Json } = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: {
    name,
    namespace: 'default',
    uid: `uid-${name}`,
    resourceVersion: rv,
    annotations: o.annotations,
  },
  spec: { volumeName: o.volumeName },
  status: { phase: o.volumeName ? 'Bound' : 'Pending' },
});
const REF = { namespace: 'default', name: 'data', uid: 'uid-data' };

describe('the patches', () => {
  it('claimRef carries the PV version decided on, and marks the bind as the controller’s', () => {
    expect(claimRefPatch(pv('pv-a', { rv: '7' }), claim('data', { rv: '3' }))).toEqual({
      metadata: { resourceVersion: '7', annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } },
      spec: { claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...REF, resourceVersion: '3' } },
    });
    // A PV the user pre-bound to this claim is not claimed for the controller.
    expect(
      claimRefPatch(pv('pv-a', { claimRef: 'data' }), claim('data')).metadata.annotations,
    ).toBeUndefined();
  });

  it('selected-node, and its removal', () => {
    expect(selectedNodePatch(claim('data', { rv: '4' }), 'n1')).toEqual({
      metadata: { resourceVersion: '4', annotations: { 'volume.kubernetes.io/selected-node': 'n1' } },
    });
    expect(
      selectedNodePatch(claim('data'), null).metadata.annotations['volume.kubernetes.io/selected-node'],
    ).toBeNull();
  });
});

describe('KubeVolumeBinder', () => {
  it('bindVolume merge-patches the PV and returns it as written', async () => {
    handler = () => ({ status: 200, body: pvJson('pv-a', '8', REF) });
    const out = await binder.bindVolume(pv('pv-a', { rv: '7' }), claim('data'));
    expect(out).toMatchObject({ name: 'pv-a', resourceVersion: '8', claimRef: REF });
    expect(requests[0]).toMatchObject({
      method: 'PATCH',
      path: '/api/v1/persistentvolumes/pv-a',
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: '7' }, spec: { claimRef: REF } },
    });
  });

  it('a conflict fails bindVolume with the API message', async () => {
    handler = () => status(409, 'the object has been modified');
    await expect(binder.bindVolume(pv('pv-a'), claim('data'))).rejects.toThrow(
      'binding PV pv-a to claim default/data: the object has been modified',
    );
  });

  it('selectNode patches the claim', async () => {
    handler = () => ({
      status: 200,
      body: claimJson('data', '11', { annotations: { 'volume.kubernetes.io/selected-node': 'n1' } }),
    });
    const out = await binder.selectNode(claim('data', { rv: '10' }), 'n1');
    expect(out.annotations['volume.kubernetes.io/selected-node']).toBe('n1');
    expect(requests[0]).toMatchObject({
      path: '/api/v1/namespaces/default/persistentvolumeclaims/data',
      body: { metadata: { resourceVersion: '10' } },
    });
  });

  it('unselectNode removes the annotation with our version', async () => {
    handler = () => ({ status: 200, body: claimJson('data', '12') });
    const written = claim('data', { rv: '11', selectedNode: 'n1' });
    await binder.unselectNode(written, 'n1');
    expect(requests.map((r) => r.body)).toEqual([
      { metadata: { resourceVersion: '11', annotations: { 'volume.kubernetes.io/selected-node': null } } },
    ]);
  });

  it('unselectNode after a conflict re-reads, and leaves a provisioned claim alone', async () => {
    handler = (r) =>
      r.method === 'PATCH'
        ? status(409, 'modified')
        : {
            status: 200,
            body: claimJson('data', '13', {
              volumeName: 'pvc-1',
              annotations: { 'volume.kubernetes.io/selected-node': 'n1' },
            }),
          };
    await binder.unselectNode(claim('data', { rv: '11', selectedNode: 'n1' }), 'n1');
    expect(requests.map((r) => r.method)).toEqual(['PATCH', 'GET']);
  });

  it('unselectNode does nothing when the provisioner already removed the annotation', async () => {
    await binder.unselectNode(claim('data', { rv: '11' }), 'n1');
    expect(requests).toEqual([]);
  });

  it('unbindVolume takes the claimRef back while the claim is unbound', async () => {
    handler = (r) =>
      r.method === 'GET'
        ? { status: 200, body: claimJson('data', '5') }
        : { status: 200, body: pvJson('pv-a', '9') };
    const written = { ...pv('pv-a', { rv: '8', claimRef: 'data', phase: 'Available' }) };
    await binder.unbindVolume(written, claim('data'));
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/namespaces/default/persistentvolumeclaims/data',
      'PATCH /api/v1/persistentvolumes/pv-a',
    ]);
    expect(requests[1]?.body).toEqual({
      metadata: { resourceVersion: '8', annotations: { 'pv.kubernetes.io/bound-by-controller': null } },
      spec: { claimRef: null },
    });
  });

  it('unbindVolume leaves a PV the PV controller bound', async () => {
    handler = () => ({ status: 200, body: claimJson('data', '6', { volumeName: 'pv-a' }) });
    await binder.unbindVolume(pv('pv-a', { rv: '8', claimRef: 'data', phase: 'Available' }), claim('data'));
    expect(requests.map((r) => r.method)).toEqual(['GET']);
    requests.length = 0;
    await binder.unbindVolume(pv('pv-a', { rv: '8', claimRef: 'data', phase: 'Bound' }), claim('data'));
    expect(requests).toEqual([]);
  });

  it('unbindVolume after a conflict re-reads the PV and stops once it names another claim', async () => {
    handler = (r) => {
      if (r.method === 'GET' && r.path.includes('persistentvolumeclaims'))
        return { status: 200, body: claimJson('data', '5') };
      if (r.method === 'PATCH') return status(409, 'modified');
      return {
        status: 200,
        body: pvJson('pv-a', '10', { namespace: 'default', name: 'other', uid: 'uid-other' }),
      };
    };
    await binder.unbindVolume(pv('pv-a', { rv: '8', claimRef: 'data', phase: 'Available' }), claim('data'));
    expect(requests.map((r) => r.method)).toEqual(['GET', 'PATCH', 'GET']);
  });
});
