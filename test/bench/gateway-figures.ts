// Figures read from the gateway under a bench: its /metrics text and its log file.

/** A counter of the Prometheus text summed over its series (0 when absent). */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

/** The gateway log's failed binds ("bind failed; requeued"), counted by their error. */
export function failedBindsByError(log: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of log.split('\n')) {
    if (!line.includes('"bind failed; requeued"')) continue;
    try {
      const err = String((JSON.parse(line) as { err?: unknown }).err ?? 'unknown');
      counts[err] = (counts[err] ?? 0) + 1;
    } catch {
      // a line cut short: not counted
    }
  }
  return counts;
}
