import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where benchmarks write their results: bench/results/. */
export const RESULTS_DIR = join(__dirname, '..', 'results');

/** Markdown table from rows of cells. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Appends a dated section to bench/results/<name>.md (never rewrites earlier sections). */
export function appendResults(name: string, title: string, body: string): void {
  const file = join(RESULTS_DIR, `${name}.md`);
  if (!existsSync(file)) writeFileSync(file, `# Benchmark results: ${name}\n\nEach section is appended by the benchmark named in its title.\n`);
  appendFileSync(file, `\n## ${title} — ${new Date().toISOString()}\n\n${body}\n`);
}
