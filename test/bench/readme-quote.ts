// The README's performance section quotes the last full `npm run bench`: its summary table and the line
// saying when and where it ran are copied from test/bench/RESULTS.md between two markers, so the quote
// cannot drift from the report. `npm run bench` calls it after a complete run; by hand:
//   npx tsx test/bench/readme-quote.ts [RESULTS.md] [README.md]
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const QUOTE_START = '<!-- bench-summary:start (test/bench/readme-quote.ts writes this part) -->';
export const QUOTE_END = '<!-- bench-summary:end -->';

/** The summary table and the run's header sentence of a RESULTS.md, or why they cannot be quoted. */
export function summaryOf(results: string): { when: string; table: string } | { error: string } {
  if (/\*\*Partial: /.test(results)) return { error: 'RESULTS.md is partial: quote a complete run only' };
  const when = /^Measured ([^\n]+(?:\n[^\n]+)?) on (\d+) CPUs\n\(([^)]+)\)/m.exec(results);
  const lines = results.split('\n');
  const heading = lines.findIndex((l) => l.startsWith('## Summary'));
  if (!when || heading < 0)
    return { error: 'RESULTS.md has no "Measured …" header or no "## Summary" table' };
  const table: string[] = [];
  for (const line of lines.slice(heading + 1)) {
    if (line.startsWith('|')) table.push(line);
    else if (table.length) break;
  }
  if (table.length < 3) return { error: 'the summary table is empty' };
  const run = (when[1] ?? '').replace(/\s+/g, ' ').replace(/ with `npm run bench`/, '');
  return { when: `${run} on ${when[2]} CPUs (${when[3]})`, table: table.join('\n') };
}

/** README with the part between the markers replaced by the quote. */
export function quoteInto(readme: string, results: string): string {
  const summary = summaryOf(results);
  if ('error' in summary) throw new Error(summary.error);
  const start = readme.indexOf(QUOTE_START);
  const end = readme.indexOf(QUOTE_END);
  if (start < 0 || end < start) throw new Error(`README has no ${QUOTE_START} … ${QUOTE_END} markers`);
  const quote = `${QUOTE_START}\nLast full run: ${summary.when}. Every figure is in RESULTS.md.\n\n${summary.table}\n`;
  return readme.slice(0, start) + quote + readme.slice(end);
}

export async function quoteReadme(resultsPath: string, readmePath: string): Promise<void> {
  const [results, readme] = await Promise.all([readFile(resultsPath, 'utf8'), readFile(readmePath, 'utf8')]);
  await writeFile(readmePath, quoteInto(readme, results));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
  quoteReadme(process.argv[2] ?? here('./RESULTS.md'), process.argv[3] ?? here('../../README.md')).catch(
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 1;
    },
  );
}
