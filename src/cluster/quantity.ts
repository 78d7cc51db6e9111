/**
 * Kubernetes resource.Quantity parsing for the two resources the load model uses.
 * Accepts the canonical forms the API server returns plus user-written ones ("0.5", "1e3", "1Gi").
 */
const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

/** The quantity as a plain number of base units, or undefined when it is not a valid quantity. */
export function parseQuantity(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  // Untrusted JSON (admission reviews) may carry anything here.
  if (typeof value !== 'string') return undefined;
  const m = QUANTITY.exec(value.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  if (m[2]) return base * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  return base * (BINARY[suffix] ?? DECIMAL[suffix] ?? 1);
}

/** CPU quantity in millicores (rounded up, as the API server does for sub-milli values). */
export function cpuMilli(value: unknown): number {
  const v = parseQuantity(value);
  return v === undefined ? 0 : Math.ceil(v * 1000 - 1e-9);
}

/** Memory (or any integer quantity) in base units, rounded up. */
export function bytes(value: unknown): number {
  const v = parseQuantity(value);
  return v === undefined ? 0 : Math.ceil(v - 1e-9);
}

export function formatCpu(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

export function formatMemory(b: number): string {
  for (const [suffix, f] of [
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const) {
    if (b >= f && b % f === 0) return `${b / f}${suffix}`;
  }
  return String(b);
}

/** A quantity in the canonical unit of its resource: millicores for cpu, the plain value otherwise. */
export function resourceValue(name: string, quantity: unknown): number {
  return name === 'cpu' ? cpuMilli(quantity) : bytes(quantity);
}

/** A ResourceList of the API (name → quantity) in canonical units; anything but an object is empty. */
export function toResourceList(list: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!list || typeof list !== 'object') return out;
  for (const [name, q] of Object.entries(list)) out[name] = resourceValue(name, q);
  return out;
}
