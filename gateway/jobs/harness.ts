import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../config';
import { childEnv, tiedToParent } from '../lib/process';

/** One JSON line of the ml-training harness (see templates/ml-training/README.md). */
export type HarnessLine = { type: string } & Record<string, unknown>;

/**
 * Starts the ml-training harness (`node index.js`) of an image directory with `env`; every JSON
 * line on stdout goes to `onLine`, other output to `onText`. The process dies with its parent.
 */
export function spawnHarness(dir: string, env: Record<string, string>, onLine: (l: HarnessLine) => void, onText: (t: string) => void): ChildProcess {
  const argv = [process.execPath, 'index.js'];
  const cmd = tiedToParent(argv);
  const child = spawn(cmd[0], cmd.slice(1), {
    cwd: dir,
    env: childEnv({ NODE_PATH: join(REPO_ROOT, 'node_modules'), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: child.stdout! }).on('line', (l) => {
    if (l.startsWith('{')) {
      try {
        onLine(JSON.parse(l) as HarnessLine);
        return;
      } catch {
        // not a report line
      }
    }
    onText(l);
  });
  createInterface({ input: child.stderr! }).on('line', onText);
  return child;
}

export function exited(c: ChildProcess): Promise<number | null> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve(c.exitCode);
  return new Promise((r) => c.once('exit', (code) => r(code)));
}
