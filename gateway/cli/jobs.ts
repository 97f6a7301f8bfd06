/**
 * `mlfaas jobs list | watch ID | submit --function F --length N [--deadline S] ...` against a
 * gateway (`--gateway`, default OPENFAAS_URL or http://127.0.0.1:8080). `watch` draws a progress
 * bar from the job's Server-Sent Events until the job ends.
 */
import { parseArgs } from 'node:util';

interface Ev {
  type: string;
  data: Record<string, unknown>;
}

export function bar(done: number, total: number, width = 30): string {
  const f = total > 0 ? Math.max(0, Math.min(1, done / total)) : 0;
  const n = Math.round(f * width);
  return `[${'#'.repeat(n)}${'.'.repeat(width - n)}] ${(f * 100).toFixed(0).padStart(3)}%`;
}

/** Basic credentials for a gateway with auth on (`--username/--password` or MLFAAS_AUTH_USER/_PASSWORD). */
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
      out.write(`\r${bar(d.epoch, d.epochs)} epoch ${d.epoch}/${d.epochs} loss ${d.loss?.toFixed(4) ?? '-'} acc ${d.accuracy?.toFixed(3) ?? '-'} workers ${workers}`);
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
  const { values, positionals } = parseArgs({
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
    },
  });
  const user = values.username ?? process.env.MLFAAS_AUTH_USER ?? 'admin';
  const password = values.password ?? process.env.MLFAAS_AUTH_PASSWORD;
  if (password) authHeader = { authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64') };
  const base = (values.gateway ?? process.env.OPENFAAS_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  if (sub === 'list') {
    const res = await fetch(`${base}/system/jobs`, { headers: authHeader });
    if (res.status !== 200) {
      process.stderr.write(`${res.status}: ${await res.text()}\n`);
      return 1;
    }
    const list = (await res.json()) as Array<{ id: string; state: string; function: string; workers: number; progress?: { epoch: number; epochs: number } }>;
    for (const j of list) console.log(`${j.id}  ${j.function.padEnd(16)} ${j.state.padEnd(10)} workers ${j.workers}  ${j.progress ? `${j.progress.epoch}/${j.progress.epochs}` : '-'}`);
    return 0;
  }
  if (sub === 'watch' && positionals[0]) return watch(base, positionals[0], process.stderr);
  if (sub === 'submit' && values.function && values.length) {
    const body: Record<string, unknown> = { function: values.function, length: Number(values.length) };
    if (values.deadline) body.deadline = /^\d+(\.\d+)?$/.test(values.deadline) ? Number(values.deadline) : values.deadline;
    if (values['batch-size']) body.batch_size = Number(values['batch-size']);
    if (values['learning-rate']) body.learning_rate = Number(values['learning-rate']);
    if (values.model) body.model = values.model;
    const res = await fetch(`${base}/system/jobs${values['dry-run'] ? '?dryRun=true' : ''}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...authHeader } });
    console.log(JSON.stringify(await res.json(), null, 2));
    return res.status < 300 ? 0 : 1;
  }
  process.stderr.write('usage: mlfaas jobs list | watch ID | submit --function F --length EPOCHS [--deadline SECONDS|RFC3339] [--batch-size N] [--dry-run]\n');
  return 2;
}
