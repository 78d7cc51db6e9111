// Prometheus text exposition, as the tests and benches read it from /metrics (the gateway's, the API
// server's): a counter or gauge summed over its series.

/**
 * `name` summed over its series that carry every one of `labels` (0 when none does). Label sets are split
 * on commas: enough for the metrics read here, whose label values hold none.
 */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name} `) && !line.startsWith(`${name}{`)) continue;
    const set = line.startsWith(`${name}{`)
      ? line.slice(name.length + 1, line.lastIndexOf('}')).split(',')
      : [];
    if (wanted.every((w) => set.includes(w))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
