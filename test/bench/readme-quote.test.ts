import { describe, expect, it } from 'vitest';
import { QUOTE_END, QUOTE_START, quoteInto, summaryOf } from './readme-quote.js';

const results = (extra = '') => `# nodeload benchmarks

Measured 2026-12-07 08:01 UTC with \`npm run bench\` (81.2 min) on 2 CPUs
(AMD EPYC), 23.5 GiB RAM, Node v24.21.0; load average at the start
(1 / 5 / 15 min): 1.0 / 2.7 / 3.2. Everything ran on this one machine.${extra}

## Summary: nodeload as a ratio of its anchors

| metric | anchor | nodeload ÷ anchor |  |
| --- | --: | --: | --: |
| webhook req/s | raw node:https | 0.86× | higher is better |

## Webhook
| other | table |
`;

const readme = `## Performance

Prose.

${QUOTE_START}
old quote
${QUOTE_END}

More prose.
`;

describe('readme-quote', () => {
  it('replaces what is between the markers with the run line and the summary table', () => {
    expect(quoteInto(readme, results())).toBe(`## Performance

Prose.

${QUOTE_START}
Last full run: 2026-12-07 08:01 UTC (81.2 min) on 2 CPUs (AMD EPYC). Every figure is in RESULTS.md.

| metric | anchor | nodeload ÷ anchor |  |
| --- | --: | --: | --: |
| webhook req/s | raw node:https | 0.86× | higher is better |
${QUOTE_END}

More prose.
`);
  });

  it('is idempotent', () => {
    const once = quoteInto(readme, results());
    expect(quoteInto(once, results())).toBe(once);
  });

  it.each([
    ['a partial run', results('\n\n**Partial: 3 of 9 benches done when this was written**'), /partial/],
    ['no summary', '# nodeload benchmarks\n\nMeasured x on 2 CPUs\n(y)\n', /no "Measured/],
    [
      'an empty table',
      results()
        .replace(/\| webhook[^\n]*\n/, '')
        .replace(/\| --- [^\n]*\n/, ''),
      /empty/,
    ],
  ])('refuses %s', (_, r, message) => {
    expect(() => quoteInto(readme, r)).toThrow(message);
  });

  it('refuses a README without the markers', () => {
    expect(() => quoteInto('## Performance\n', results())).toThrow(/markers/);
  });

  it('reads the run line', () => {
    expect(summaryOf(results())).toMatchObject({
      when: '2026-12-07 08:01 UTC (81.2 min) on 2 CPUs (AMD EPYC)',
    });
  });
});
