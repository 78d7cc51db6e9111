/**
 * `labelSelector` and `fieldSelector` query parameters in the apiserver's string syntax
 * (k8s.io/apimachinery labels.Parse and fields.ParseSelector): parsed once per request, then matched
 * against each object.
 */

export type LabelOperator = 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export interface FieldRequirement {
  field: string;
  operator: 'Equals' | 'NotEquals';
  value: string;
}

/** Thrown for a selector the apiserver would reject; the message is shown to the client. */
export class SelectorError extends Error {}

/** Splits on commas that are not inside a parenthesised value set. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

const KEY = String.raw`([^\s!=<>(),]+)`;
const VALUE = String.raw`([^\s!=<>(),]*)`;
const NOT_EXISTS = new RegExp(String.raw`^!\s*${KEY}$`);
const SET = new RegExp(String.raw`^${KEY}\s+(in|notin)\s*\(([^()]*)\)$`);
const EQUALITY = new RegExp(String.raw`^${KEY}\s*(==|=|!=)\s*${VALUE}$`);
const COMPARE = new RegExp(String.raw`^${KEY}\s*(<|>)\s*(-?\d+)$`);
const EXISTS = new RegExp(`^${KEY}$`);

function parseRequirement(raw: string): LabelRequirement {
  const text = raw.trim();
  let m = NOT_EXISTS.exec(text);
  if (m) return { key: m[1] as string, operator: 'DoesNotExist', values: [] };
  m = SET.exec(text);
  if (m) {
    const values = (m[3] as string)
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    if (values.length === 0) throw new SelectorError(`for '${m[2]}' set operator, values set can't be empty`);
    return { key: m[1] as string, operator: m[2] === 'in' ? 'In' : 'NotIn', values };
  }
  m = EQUALITY.exec(text);
  if (m)
    return {
      key: m[1] as string,
      operator: m[2] === '!=' ? 'NotEquals' : 'Equals',
      values: [m[3] as string],
    };
  m = COMPARE.exec(text);
  if (m) return { key: m[1] as string, operator: m[2] === '>' ? 'Gt' : 'Lt', values: [m[3] as string] };
  m = EXISTS.exec(text);
  if (m) return { key: m[1] as string, operator: 'Exists', values: [] };
  throw new SelectorError(`unable to parse requirement: "${text}"`);
}

/** An empty or absent selector selects everything (no requirements). */
export function parseLabelSelector(text: string | undefined): LabelRequirement[] {
  if (!text || text.trim() === '') return [];
  return splitTopLevel(text).map((part) => {
    if (part.trim() === '')
      throw new SelectorError(`unable to parse requirement: empty requirement in "${text}"`);
    return parseRequirement(part);
  });
}

function requirementMatches(req: LabelRequirement, labels: Record<string, string>): boolean {
  const present = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  switch (req.operator) {
    case 'Equals':
    case 'In':
      return present && req.values.includes(value as string);
    case 'NotEquals':
    case 'NotIn':
      return !present || !req.values.includes(value as string);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    case 'Gt':
    case 'Lt': {
      if (!present || !/^-?\d+$/.test(value as string)) return false;
      const have = Number(value);
      const want = Number(req.values[0]);
      return req.operator === 'Gt' ? have > want : have < want;
    }
  }
}

export function labelsMatch(reqs: readonly LabelRequirement[], labels: Record<string, string>): boolean {
  return reqs.every((r) => requirementMatches(r, labels));
}

/**
 * Field selectors: `metadata.name` (and `metadata.namespace`, which every resource supports) with
 * `=`, `==` or `!=`; any other field is rejected as the apiserver does.
 */
export function parseFieldSelector(
  text: string | undefined,
  supported: readonly string[] = ['metadata.name', 'metadata.namespace'],
): FieldRequirement[] {
  if (!text || text.trim() === '') return [];
  return text.split(',').map((raw) => {
    const m = /^\s*([^\s!=]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(raw);
    if (!m) throw new SelectorError(`invalid selector: '${text}'; can't understand '${raw}'`);
    const field = m[1] as string;
    if (!supported.includes(field)) throw new SelectorError(`field label not supported: ${field}`);
    return { field, operator: m[2] === '!=' ? 'NotEquals' : 'Equals', value: m[3] as string };
  });
}

export function fieldsMatch(reqs: readonly FieldRequirement[], fields: Record<string, string>): boolean {
  return reqs.every((r) => ((fields[r.field] ?? '') === r.value) === (r.operator === 'Equals'));
}

/** The single name a field selector pins down (`metadata.name=x`), which lets a lookup skip the scan. */
export function exactName(reqs: readonly FieldRequirement[]): string | undefined {
  return reqs.find((r) => r.field === 'metadata.name' && r.operator === 'Equals')?.value;
}
