/**
 * `mlfaas jobs list | watch ID | submit --function F --length N [--deadline S] ...` against a
 * gateway chosen as gateway-target.ts documents. `watch` draws a progress bar from the job's
 * Server-Sent Events until the job ends.
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../gateway/config';
import { authHeaders, GatewayTarget, readGatewayTargetInputs, resolveGatewayTarget, unreachableMessage } from './gateway-target';

export const JOBS_USAGE = `Usage:
  mlfaas jobs list
  mlfaas jobs watch ID                  progress bar from the job's events until it ends
  mlfaas jobs submit --function F --length EPOCHS [--deadline SECONDS|RFC3339]
                    [--batch-size N] [--learning-rate X] [--model M] [--dry-run]

Gateway (first set wins):
  -g, --gateway URL     then MLFAAS_GATEWAY, then OPENFAAS_URL, then http://127.0.0.1:$MLFAAS_PORT (8080)
Credentials for basic auth (first set wins):
  --username U --password P
                        then MLFAAS_AUTH_USER / MLFAAS_AUTH_PASSWORD,
                        then faas-cli's saved login for that gateway (faas-cli login; read from
                        ~/.openfaas/config.yml or $OPENFAAS_CONFIG/config.yml),
                        then, for a gateway on 127.0.0.1/localhost, the password the gateway
                        generated in its data dir ($MLFAAS_DATA_DIR/basic-auth-password, user admin)
  -h, --help            this help`;

interface Ev {
  type: string;
  data: Record<string, unknown>;
}

export function bar(done: number, total: number, width = 30): string {
  const f = total > 0 ? Math.max(0, Math.min(1, done / total)) : 0;
  const n = Math.round(f * width);
  return `[${'#'.repeat(n)}${'.'.repeat(width - n)}] ${(f * 100).toFixed(0).padStart(3)}%`;
}

/** Basic credentials for a gateway with auth on (see JOBS_USAGE). */
let authHeader: Record<string, string> = {};

/** The JSON `data:` payloads of a Server-Sent Events body, in order (comments and ids skipped). */
export async function* sseData<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  const reader = body.getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += Buffer.from(value).toString();
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const data = buf.slice(0, i).split('\n').find((l) => l.startsWith('data: '));
      buf = buf.slice(i + 2);
      if (data) yield JSON.parse(data.slice(6)) as T;
    }
  }
}

async function watch(base: string, id: string, out: NodeJS.WriteStream): Promise<number> {
  const res = await fetch(`${base}/system/jobs/${id}/events`, { headers: authHeader });
  if (res.status !== 200) {
    out.write(`job ${id}: ${res.status} ${await res.text()}\n`);
    return 1;
  }
  let workers = 0;
  for await (const e of sseData<Ev>(res.body!)) {
    if (e.type === 'allocation') workers = Number(e.data.workers);
    if (e.type === 'progress') {
      const d = e.data as { epoch: number; epochs: number; accuracy?: number; loss?: number };
      out.write(`\r${bar(d.epoch, d.epochs)} epoch ${d.epoch}/${d.epochs} loss ${d.loss?.toFixed(4) ?? '-'} ` +
        `acc ${d.accuracy?.toFixed(3) ?? '-'} workers ${workers}`);
    }
    if (e.type === 'state' && ['completed', 'cancelled', 'failed'].includes(String(e.data.state))) {
      out.write(`\n${id}: ${e.data.state}\n`);
      return e.data.state === 'completed' ? 0 : 1;
    }
  }
  out.write('\n');
  return 1;
}

export async function jobsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        gateway: { type: 'string', short: 'g' },
        function: { type: 'string' },
        length: { type: 'string' },
        deadline: { type: 'string' },
        'batch-size': { type: 'string' },
        'learning-rate': { type: 'string' },
        model: { type: 'string' },
        'dry-run': { type: 'boolean' },
        username: { type: 'string' },
        password: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${JOBS_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (!sub || sub === 'help' || sub === '--help' || sub === '-h' || values.help) {
    console.log(JOBS_USAGE);
    return sub ? 0 : 2;
  }
  const dataDir = resolve(process.env.MLFAAS_DATA_DIR ?? join(REPO_ROOT, '.mlfaas'));
  const target = resolveGatewayTarget(readGatewayTargetInputs(
    { gateway: values.gateway, username: values.username, password: values.password }, process.env, dataDir));
  authHeader = authHeaders(target);
  try {
    return await run(sub, values, positionals, target);
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    // fetch() failing to connect: "fetch failed" with the reason in `cause`
    if (err.message === 'fetch failed' || err.cause?.code) {
      process.stderr.write(`${unreachableMessage(target, err.cause?.code ?? err.cause?.message ?? err.message)}\n`);
      return 1;
    }
    throw e;
  }
}

async function run(sub: string, values: Record<string, string | boolean | undefined>, positionals: string[], target: GatewayTarget): Promise<number> {
  const base = target.url;
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  if (sub === 'list') {
    const res = await fetch(`${base}/system/jobs`, { headers: authHeader });
    if (res.status !== 200) {
      const refused = target.credentials ? `credentials (from ${target.credentials.from}) refused` : 'no credentials: see mlfaas jobs --help';
      process.stderr.write(`${res.status}: ${await res.text()}${res.status === 401 ? `\n${refused}` : ''}\n`);
      return 1;
    }
    const list = (await res.json()) as Array<{ id: string; state: string; function: string; workers: number; progress?: { epoch: number; epochs: number } }>;
    for (const j of list)
      console.log(`${j.id}  ${j.function.padEnd(16)} ${j.state.padEnd(10)} ` +
        `workers ${j.workers}  ${j.progress ? `${j.progress.epoch}/${j.progress.epochs}` : '-'}`);
    return 0;
  }
  if (sub === 'watch' && positionals[0]) return watch(base, positionals[0], process.stderr);
  const fn = str('function');
  const length = str('length');
  if (sub === 'submit' && fn && length) {
    const body: Record<string, unknown> = { function: fn, length: Number(length) };
    const deadline = str('deadline');
    if (deadline) body.deadline = /^\d+(\.\d+)?$/.test(deadline) ? Number(deadline) : deadline;
    if (str('batch-size')) body.batch_size = Number(str('batch-size'));
    if (str('learning-rate')) body.learning_rate = Number(str('learning-rate'));
    if (str('model')) body.model = str('model');
    const res = await fetch(`${base}/system/jobs${values['dry-run'] ? '?dryRun=true' : ''}`,
      { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...authHeader } });
    console.log(JSON.stringify(await res.json(), null, 2));
    return res.status < 300 ? 0 : 1;
  }
  process.stderr.write(`${JOBS_USAGE}\n`);
  return 2;
}
