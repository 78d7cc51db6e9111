// Figures read from the gateway's log under a bench.

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
