import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { TEST_ENV } from './platform';

const BIN = join(__dirname, '../../bin/mlfaas');

/** `mlfaas gateway` as a real child process; resolves with its URL once it listens. */
export async function gatewayProcess(env: Record<string, string>): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [BIN, 'gateway'], { env: { ...process.env, ...TEST_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`gateway did not start:\n${out}`)), 20000);
    const check = () => {
      const m = /gateway on (http:\/\/[\d.:]+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    };
    child.stderr!.on('data', check);
    child.once('exit', (code) => reject(new Error(`gateway exited ${code}:\n${out}`)));
  });
  return { url, child, output: () => out };
}
