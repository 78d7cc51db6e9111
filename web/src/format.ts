/** Display formatting: Kubernetes-style quantities, percentages, ages. Pure. */

export function formatCpu(milli: number): string {
  if (Math.abs(milli) < 1000) return `${Math.round(milli)}m`;
  const cores = milli / 1000;
  return Number.isInteger(cores) ? String(cores) : cores.toFixed(cores >= 10 ? 1 : 2).replace(/0+$/, '');
}

const BINARY = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BINARY.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 || Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits).replace(/\.?0+$/, '')}${BINARY[unit]}`;
}

/** Whole percent from 10 up, one decimal below, so small loads do not all read "0%". */
export function formatPercent(value: number): string {
  if (!Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  return `${abs >= 10 || abs === 0 ? Math.round(value) : value.toFixed(1)}%`;
}

/** Signed percentage points, e.g. "+12.5 pp", "−3 pp". */
export function formatPoints(value: number): string {
  const sign = value > 0 ? '+' : value < 0 ? '−' : '±';
  const abs = Math.abs(value);
  return `${sign}${abs >= 10 ? Math.round(abs) : abs.toFixed(1)} pp`;
}

/** "4s", "3m", "2h", "5d": the age of a timestamp at `now`. */
export function formatAge(iso: string | null | undefined, now: number): string {
  if (!iso) return '–';
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return '–';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

export function formatMs(ms: number): string {
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** HH:MM:SS in the viewer's time zone. */
export function formatClock(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour12: false });
}
