/**
 * The bytes of a list answer, as per-object pieces encoded once. A NodeLoad object is never changed
 * after the store hands it out (a change is a new object), so its JSON — and the parts of its Table row
 * that do not depend on the clock — can be kept with it, as UTF-8 bytes, and reused by every list until
 * it changes. At 5,000 nodes that turns each list from serialising and encoding 5,000 objects (~6 MB)
 * into a run of kept buffers, which body.ts sends (copied into chunks as the socket takes them, or
 * compressed). Concatenated, the pieces are exactly JSON.stringify of what nodeLoadList / nodeLoadTable
 * return (the unit tests compare them), so clients see no difference.
 */
import type { NodeLoadList, NodeLoadObject } from './nodeloads.js';
import {
  ageCellAt,
  type IncludeObject,
  NODELOAD_COLUMNS,
  nodeLoadCells,
  type TableOptions,
} from './table.js';

const objectJson = new WeakMap<NodeLoadObject, string>();
const objectBytes = new WeakMap<NodeLoadObject, Buffer>();

/** JSON.stringify(obj), computed once per object. */
export function objectToJson(obj: NodeLoadObject): string {
  let json = objectJson.get(obj);
  if (json === undefined) {
    json = JSON.stringify(obj);
    objectJson.set(obj, json);
  }
  return json;
}

function bytesOf(obj: NodeLoadObject): Buffer {
  let bytes = objectBytes.get(obj);
  if (bytes === undefined) {
    bytes = Buffer.from(objectToJson(obj));
    objectBytes.set(obj, bytes);
  }
  return bytes;
}

const COMMA = Buffer.from(',');

/** `head`, then each item's pieces with commas between items, then `tail` (not copied). */
function joined(head: string, items: readonly (readonly Buffer[])[], tail: string): Buffer[] {
  const pieces: Buffer[] = [Buffer.from(head)];
  for (const [i, item] of items.entries()) {
    if (i > 0) pieces.push(COMMA);
    for (const piece of item) pieces.push(piece);
  }
  pieces.push(Buffer.from(tail));
  return pieces;
}

/** JSON.stringify(list) as UTF-8 pieces, from each item's kept bytes. */
export function listToJson(list: NodeLoadList): Buffer[] {
  return joined(
    `{"apiVersion":${JSON.stringify(list.apiVersion)},"kind":${JSON.stringify(list.kind)},` +
      `"metadata":${JSON.stringify(list.metadata)},"items":[`,
    list.items.map((obj) => [bytesOf(obj)]),
    ']}',
  );
}

/** A Table row around its AGE cell (index 5), the only part the clock changes, as kept bytes. */
interface RowParts {
  /** `{"cells":[…cells before AGE,` */
  open: Buffer;
  /** `,…cells after AGE]` */
  cells: Buffer;
  createdMs: number;
  /** `,"object":…}` for each includeObject and meta version, made when first asked for. */
  closes: Map<string, Buffer>;
  /** The whole row as last sent, and for which AGE / includeObject / version: AGE moves rarely. */
  last?: { key: string; row: Buffer };
}

const AGE_CELL = 5;
const rowParts = new WeakMap<NodeLoadObject, RowParts>();

function partsOf(obj: NodeLoadObject): RowParts {
  let parts = rowParts.get(obj);
  if (parts === undefined) {
    const cells = nodeLoadCells(obj, 0).map((c) => JSON.stringify(c));
    parts = {
      open: Buffer.from(`{"cells":[${cells.slice(0, AGE_CELL).join(',')},`),
      cells: Buffer.from(`,${cells.slice(AGE_CELL + 1).join(',')}]`),
      createdMs: Date.parse(obj.metadata.creationTimestamp),
      closes: new Map(),
    };
    rowParts.set(obj, parts);
  }
  return parts;
}

function rowClose(obj: NodeLoadObject, parts: RowParts, include: IncludeObject, version: string): Buffer {
  const key = `${include}/${version}`;
  let close = parts.closes.get(key);
  if (close === undefined) {
    close = Buffer.from(
      include === 'None'
        ? '}'
        : include === 'Object'
          ? `,"object":${objectToJson(obj)}}`
          : `,"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/${version}",` +
            `"metadata":${JSON.stringify(obj.metadata)}}}`,
    );
    parts.closes.set(key, close);
  }
  return close;
}

const COLUMNS_JSON = JSON.stringify(NODELOAD_COLUMNS);

/** JSON.stringify(nodeLoadTable(objects, opts)) as UTF-8 pieces, from each object's kept row parts. */
export function tableToJson(objects: readonly NodeLoadObject[], opts: TableOptions): Buffer[] {
  // Nodes created together share their AGE: encode each distinct one once per answer.
  const ages = new Map<string, Buffer>();
  const rows = objects.map((obj) => {
    const p = partsOf(obj);
    const age = ageCellAt(p.createdMs, opts.now);
    const key = `${age}|${opts.includeObject}/${opts.version}`;
    if (p.last?.key !== key) {
      let ageBytes = ages.get(age);
      if (ageBytes === undefined) {
        ageBytes = Buffer.from(JSON.stringify(age));
        ages.set(age, ageBytes);
      }
      const close = rowClose(obj, p, opts.includeObject, opts.version);
      p.last = { key, row: Buffer.concat([p.open, ageBytes, p.cells, close]) };
    }
    return [p.last.row];
  });
  return joined(
    `{"kind":"Table","apiVersion":"meta.k8s.io/${opts.version}","metadata":${JSON.stringify(opts.metadata ?? {})},` +
      `"columnDefinitions":${COLUMNS_JSON},"rows":[`,
    rows,
    ']}',
  );
}
