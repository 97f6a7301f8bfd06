/**
 * OpenFaaS's classic watchdog, as a replica process: each request forks `fprocess`, the body goes
 * to its stdin, its stdout is the response. Request facts arrive as `Http_*` environment
 * variables, as in the original. Run as `node -r tsx/cjs classic-watchdog.ts` with `fprocess`
 * and `PORT` in the environment.
 */
import { spawn } from 'node:child_process';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';

const fprocess = process.env.fprocess ?? '';
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';
const execTimeoutMs = parseDuration(process.env.exec_timeout) ?? 0;
const contentType = process.env.content_type ?? 'text/plain; charset=utf-8';
let inflight = 0;
let stopping = false;

function parseDuration(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) return undefined;
  const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * mult;
}

function requestEnv(req: IncomingMessage): NodeJS.ProcessEnv {
  const url = new URL(req.url ?? '/', 'http://x');
  const env: NodeJS.ProcessEnv = { ...process.env, Http_Method: req.method, Http_Path: url.pathname };
  if (url.search) env.Http_Query = url.search.slice(1);
  for (const [k, v] of Object.entries(req.headers)) {
    const name = 'Http_' + k.split('-').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('_');
    env[name] = Array.isArray(v) ? v.join(',') : v;
  }
  return env;
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.url === '/_/health' || req.url === '/_/ready') {
    res.writeHead(stopping ? 503 : 200).end('OK');
    return;
  }
  inflight++;
  const child = spawn('sh', ['-c', fprocess], { env: requestEnv(req), stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  child.stdin.on('error', () => undefined);
  req.pipe(child.stdin);
  const timer = execTimeoutMs > 0 ? setTimeout(() => child.kill('SIGKILL'), execTimeoutMs) : undefined;
  child.on('close', (code, signal) => {
    if (timer) clearTimeout(timer);
    inflight--;
    const stderr = Buffer.concat(err).toString();
    if (stderr) process.stderr.write(stderr);
    if (code === 0) {
      res.writeHead(200, { 'Content-Type': contentType }).end(Buffer.concat(out));
    } else {
      const why = signal ? `killed by ${signal}` : `exit status ${code}`;
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`fprocess ${why}\n${stderr}`);
    }
  });
}

const server = createServer(handle);
server.listen(port, host, () => console.log(`classic watchdog: fprocess="${fprocess}" listening on ${host}:${port}`));

function stop(): void {
  if (stopping) return;
  stopping = true;
  server.close();
  const started = Date.now();
  const t = setInterval(() => {
    if (inflight === 0 || Date.now() - started > 30_000) {
      clearInterval(t);
      process.exit(0);
    }
  }, 20);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// exit with the agent that started us (sandboxed, the parent is the namespace's init, pid 1,
// which takes the whole namespace with it when it dies)
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();
