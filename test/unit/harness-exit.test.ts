/**
 * A harness's end is seen only after its last output line: a process that exits with a full pipe
 * behind it (a burst of reports, or any report on a busy machine) must not lose its `done`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, HarnessLine, spawnHarness } from '../../node-runtime/harness';

describe('spawnHarness / exited', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-harness-exit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('resolves after every line the process wrote, the last included', async () => {
    // ~1 MB of report lines, far more than a pipe holds, then `done` and an exit as soon as the
    // last write is in the pipe (not yet read by the parent)
    writeFileSync(
      join(dir, 'index.js'),
      `const pad = 'x'.repeat(100);
for (let i = 0; i < 10000; i++) process.stdout.write(JSON.stringify({ type: 'progress', step: i, pad }) + '\\n');
process.stdout.write(JSON.stringify({ type: 'done' }) + '\\n', () => process.exit(3));`,
    );
    for (let run = 0; run < 3; run++) {
      const lines: HarnessLine[] = [];
      const child = spawnHarness(dir, {}, (l) => lines.push(l), () => undefined);
      const code = await exited(child);
      expect(code).toBe(3);
      expect(lines).toHaveLength(10001);
      expect(lines[lines.length - 1].type).toBe('done');
      expect(await exited(child)).toBe(3); // asked again after the end: the same answer
    }
  }, 60000);
});
