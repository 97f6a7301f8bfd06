/**
 * Test helpers: lay out a function image the way `faas-cli build` does (template files at the
 * root, the handler folder in `function/`), run its fprocess as a child process, and talk to it.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export const repoRoot = path.resolve(__dirname, '../..');
export const nodeModules = path.resolve(__dirname, '../../node_modules');

/**
 * Copy `templates/<template>` (minus its default `function/`) and `handlerDir` into a fresh
 * temp dir; `handlerDir` is relative to the repo root. Returns the image dir.
 */
export function layoutImage(template: string, handlerDir: string, skip: string[] = []): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mlfaas-${template}-`));
  const tdir = path.join(repoRoot, 'templates', template);
  for (const entry of fs.readdirSync(tdir)) {
    if (entry === 'function' || entry === 'node_modules') continue;
    fs.cpSync(path.join(tdir, entry), path.join(dir, entry), { recursive: true });
  }
  fs.cpSync(path.join(repoRoot, handlerDir), path.join(dir, 'function'), {
    recursive: true,
    filter: (src) => !skip.includes(path.basename(src)),
  });
  return dir;
}

export function removeImage(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** A TCP port that was free a moment ago (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = addr && typeof addr === 'object' ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A running fprocess with its stdout lines and exit status collected. */
export class FunctionProcess {
  readonly lines: string[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private partial = '';
  private waiters: Array<{ test: (l: string) => boolean; resolve: (l: string) => void }> = [];

  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      this.partial += chunk;
      const parts = this.partial.split('\n');
      this.partial = parts.pop()!;
      for (const line of parts) {
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => (w.test(line) ? (w.resolve(line), false) : true));
      }
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** JSON stdout lines (others skipped). */
  json(): any[] {
    return this.lines.flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
  }

  /** Resolve with the first stdout line (past or future) passing `test`; reject after timeoutMs. */
  waitForLine(test: (line: string) => boolean, timeoutMs: number): Promise<string> {
    const seen = this.lines.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching line in ${timeoutMs} ms; stderr: ${this.stderr.slice(-2000)}`)),
        timeoutMs,
      );
      this.waiters.push({ test, resolve: (l) => (clearTimeout(timer), resolve(l)) });
      this.exited.then(({ code }) => reject(new Error(`exited with ${code}; stderr: ${this.stderr.slice(-2000)}`)));
    });
  }

  /** SIGKILL if still running (test clean-up). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Start `node index.js` in an image dir with the repo's node_modules on NODE_PATH. */
export function startFunction(dir: string, env: Record<string, string>): FunctionProcess {
  const child = spawn(process.execPath, ['index.js'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', NODE_PATH: nodeModules, HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new FunctionProcess(child);
}

/** Poll `GET url` until it answers 200, or throw after timeoutMs. */
export async function waitFor200(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} not 200 after ${timeoutMs} ms (${last})`);
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

/** POST a body (string or object, sent as JSON) and parse the JSON answer. */
export async function post(url: string, body: unknown): Promise<Reply> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** GET a JSON document. */
export async function getJson(url: string): Promise<any> {
  return (await fetch(url)).json();
}
