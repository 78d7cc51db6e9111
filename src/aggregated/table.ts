/**
 * Server-side printing: `kubectl get nodeloads` asks for a meta.k8s.io Table and prints its columns,
 * upper-cased (NAME CPU% MEMORY% SOURCE PODS AGE; `-o wide` adds the priority-1 columns).
 */
import { badRequest } from './api.js';
import type { MetaVersion } from './media.js';
import type { ListMeta, NodeLoadObject } from './nodeloads.js';

export interface TableColumnDefinition {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  priority: number;
}

export interface TableRow {
  cells: (string | number | boolean)[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: `meta.k8s.io/${MetaVersion}`;
  metadata: Partial<ListMeta>;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function parseIncludeObject(value: string | undefined): IncludeObject {
  if (value === undefined || value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw badRequest(
    `includeObject: Unsupported value: "${value}": supported values: "None", "Metadata", "Object"`,
  );
}

export const NODELOAD_COLUMNS: TableColumnDefinition[] = [
  { name: 'Name', type: 'string', format: 'name', description: 'Name of the node.', priority: 0 },
  {
    name: 'CPU%',
    type: 'string',
    format: '',
    description: 'Effective CPU load in percent of allocatable CPU.',
    priority: 0,
  },
  {
    name: 'Memory%',
    type: 'string',
    format: '',
    description: 'Effective memory load in percent of allocatable memory.',
    priority: 0,
  },
  {
    name: 'Source',
    type: 'string',
    format: '',
    description:
      'Where the figure comes from: requests, metrics, or metrics+estimate; marked when metrics are stale.',
    priority: 0,
  },
  {
    name: 'Pods',
    type: 'integer',
    format: '',
    description: 'Non-terminal pods bound to the node.',
    priority: 0,
  },
  { name: 'Age', type: 'string', format: '', description: 'Time since the node was created.', priority: 0 },
  { name: 'CPU', type: 'string', format: '', description: 'Effective CPU / allocatable CPU.', priority: 1 },
  {
    name: 'Memory',
    type: 'string',
    format: '',
    description: 'Effective memory / allocatable memory.',
    priority: 1,
  },
  {
    name: 'Eligible-Rules',
    type: 'string',
    format: '',
    description: 'NodeLoadRules whose pods may be placed on the node now, out of all rules.',
    priority: 1,
  },
];

/** A percentage for the table: "45%", "80.5%". */
export function percentCell(n: number): string {
  const rounded = Math.round(n * 10) / 10;
  return `${Number.isInteger(rounded) ? rounded : rounded.toFixed(1)}%`;
}

/**
 * k8s.io/apimachinery duration.HumanDuration, the AGE format every kubectl table uses:
 * "45s", "3m20s", "25m", "5h12m", "3d4h", "400d", "2y30d".
 */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    const years = Math.floor(hours / 24 / 365);
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

export function ageCell(creationTimestamp: string, now: number): string {
  return ageCellAt(Date.parse(creationTimestamp), now);
}

/** The AGE cell from an already parsed creation time (NaN when there was none). */
export function ageCellAt(createdMs: number, now: number): string {
  return Number.isNaN(createdMs) ? '<unknown>' : humanDuration(now - createdMs);
}

function sourceCell(obj: NodeLoadObject): string {
  const s = obj.status;
  if (s.unavailable) return 'unavailable';
  return s.metricsStale ? `${s.source} (metrics stale)` : s.source;
}

export function nodeLoadCells(obj: NodeLoadObject, now: number): (string | number)[] {
  const s = obj.status;
  const totalRules = s.eligibleRules.length + s.ineligibleRules.length;
  return [
    obj.metadata.name,
    percentCell(s.cpuPercent),
    percentCell(s.memoryPercent),
    sourceCell(obj),
    s.pods,
    ageCell(obj.metadata.creationTimestamp, now),
    `${s.effective.cpu}/${s.allocatable.cpu}`,
    `${s.effective.memory}/${s.allocatable.memory}`,
    totalRules === 0 ? '<none>' : `${s.eligibleRules.length}/${totalRules}`,
  ];
}

function rowObject(obj: NodeLoadObject, include: IncludeObject, version: MetaVersion): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

export interface TableOptions {
  version: MetaVersion;
  includeObject: IncludeObject;
  now: number;
  /** The list's metadata (resourceVersion, continue); a single object's Table carries its resourceVersion. */
  metadata?: Partial<ListMeta>;
}

export function nodeLoadTable(objects: readonly NodeLoadObject[], opts: TableOptions): Table {
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${opts.version}`,
    metadata: opts.metadata ?? {},
    // Every watch event repeats the columns: kubectl prints the header again only when they change.
    columnDefinitions: NODELOAD_COLUMNS,
    rows: objects.map((obj) => {
      const object = rowObject(obj, opts.includeObject, opts.version);
      return { cells: nodeLoadCells(obj, opts.now), ...(object === undefined ? {} : { object }) };
    }),
  };
}
