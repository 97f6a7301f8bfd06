/**
 * The format rules in eslint.config.js fire (issue 23, item 7): a line over 160 characters fails
 * the lint, as do the whitespace and quote habits the code keeps. Linted from memory (`lintText`
 * with a path), as test/lint/layer-boundaries.test.ts does: no file is written to the tree.
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';

const ROOT = join(__dirname, '..', '..');
// the config is loaded here: ESLint's own loader uses import(), which Jest's VM does not offer
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require(join(ROOT, 'eslint.config.js')) as ESLint.Options['overrideConfig'];
const eslint = new ESLint({ cwd: ROOT, overrideConfigFile: true, overrideConfig: config });

async function rulesFired(file: string, code: string): Promise<string[]> {
  const [r] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return r.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

/** A statement of exactly `n` characters: `export const s = '…';`. */
const lineOf = (n: number) => `export const s = '${'x'.repeat(n - 20)}';`;

describe('lines of at most 160 characters', () => {
  test('a line of 161 characters is refused', async () => {
    expect(lineOf(161)).toHaveLength(161);
    expect(await rulesFired('gateway/format-probe.ts', `${lineOf(161)}\n`)).toEqual([
      '@stylistic/max-len: This line has a length of 161. Maximum allowed is 160.',
    ]);
  });

  test('a line of 160 characters passes', async () => {
    expect(await rulesFired('gateway/format-probe.ts', `${lineOf(160)}\n`)).toEqual([]);
  });

  test('a long comment and a long template literal are refused too', async () => {
    const comment = `// ${'word '.repeat(40).trim()}\nexport const a = 1;\n`;
    const template = `export const t = \`${'y'.repeat(150)}\`;\n`;
    expect(await rulesFired('cli/format-probe.ts', comment)).toEqual([expect.stringMatching(/^@stylistic\/max-len: /)]);
    expect(await rulesFired('node-runtime/format-probe.ts', template)).toEqual([expect.stringMatching(/^@stylistic\/max-len: /)]);
  });

  test('a URL alone on a line is allowed past 160', async () => {
    expect(await rulesFired('gateway/format-probe.ts', `// https://example.com/${'p/'.repeat(80)}\nexport const a = 1;\n`)).toEqual([]);
  });
});

describe('whitespace and quotes', () => {
  test.each([
    ['trailing whitespace', "export const a = 'x';  \n", '@stylistic/no-trailing-spaces'],
    ['no final newline', "export const a = 'x';", '@stylistic/eol-last'],
    ['a tab', "export function f(): string {\n\treturn 'x';\n}\n", '@stylistic/no-tabs'],
    ['two blank lines', "export const a = 'x';\n\n\nexport const b = 'y';\n", '@stylistic/no-multiple-empty-lines'],
    ['a missing semicolon', "export const a = 'x'\n", '@stylistic/semi'],
    ['double quotes', 'export const a = "x";\n', '@stylistic/quotes'],
    ['a multi-line list without its trailing comma', "export const a = [\n  'x',\n  'y'\n];\n", '@stylistic/comma-dangle'],
    ['a 4-space indent', "export function f(): string {\n    return 'x';\n}\n", '@stylistic/indent'],
  ])('%s is refused', async (_what, code, rule) => {
    const fired = await rulesFired('gateway/format-probe.ts', code);
    expect(fired.map((m) => m.split(':')[0])).toContain(rule);
  });

  test('double quotes around a single quote pass (avoidEscape)', async () => {
    expect(await rulesFired('gateway/format-probe.ts', 'export const a = "it\'s";\n')).toEqual([]);
  });
});

describe('no path is exempt (the TODO(issue 23) block is gone)', () => {
  test('max-len, quotes and no-multiple-empty-lines fire in the paths that were under concurrent edit', async () => {
    for (const dir of ['autoscaler/sim', 'autoscaler/inference', 'bench/inference', 'test/autoscaler']) {
      expect(await rulesFired(`${dir}/format-probe.ts`, `${lineOf(200)}\n`)).toEqual([expect.stringMatching(/^@stylistic\/max-len: /)]);
    }
    expect(await rulesFired('autoscaler/inference/index.ts', "export const s = 'x';\nexport const t = \"y\";\n\n")).toEqual([
      expect.stringMatching(/^@stylistic\/quotes: /),
      expect.stringMatching(/^@stylistic\/no-multiple-empty-lines: /),
    ]);
  });
});
