import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const RESULTS = join(__dirname, '..', 'RESULTS.md');

/** Markdown table from rows of cells. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Appends a dated section to bench/RESULTS.md (never rewrites earlier sections). */
export function appendResults(title: string, body: string): void {
  if (!existsSync(RESULTS)) writeFileSync(RESULTS, '# Benchmark results\n\nEach section is appended by the benchmark named in its title.\n');
  appendFileSync(RESULTS, `\n## ${title} — ${new Date().toISOString()}\n\n${body}\n`);
}
