/**
 * The CPU latency corpus (issue 12): every ONNX file in DIR served by the ml-inference runtime in
 * a cgroup of its own, measured by the platform's capability profiler (`profileReplica`: real HTTP
 * requests of one instance each, `batch` concurrent clients, so batches of about `batch` form)
 * at cores × CFS quota × batch. The kernel enforces both dimensions (cpuset, CFS bandwidth), as
 * for a deployed replica. Writes OUT.csv (the measurements) and OUT.features.json (each model's
 * feature vector from its own ONNX file, `autoscaler/rapp/onnx-features.ts`), so the models
 * themselves need not be kept.
 *
 * Usage (as root, nothing else running): tsx bench/rapp/measure-cpu.ts DIR OUT [--seconds S] [--only a,b]
 * DIR from `/usr/bin/python3 bench/rapp/export_corpus.py DIR`.
 */
import { spawn, ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { featureVector, onnxFileFeatures } from '../../autoscaler/rapp/onnx-features';
import { REPO_ROOT } from '../../gateway/config';
import { Cgroups } from '../../node-runtime/cgroups';
import { cfsQuotaUs } from '../../node-runtime/cpu-values';
import { profileReplica } from '../../node-runtime/profiler';

const CORES = [1, 2];
const QUOTAS = [1, 0.5, 0.25];
const BATCHES = [1, 2, 4, 8];
const HEADER = 'model,cores,quota,batch,latency_ms,throughput\n';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** An ml-inference image around one model: the runtime's files, image-classify's handler (`{"random": n}` inputs). */
function image(model: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-cpu-corpus-'));
  const tpl = join(REPO_ROOT, 'templates/ml-inference');
  for (const f of readdirSync(tpl)) if (f.endsWith('.js') || f === 'package.json') copyFileSync(join(tpl, f), join(dir, f));
  mkdirSync(join(dir, 'function'));
  copyFileSync(join(REPO_ROOT, 'functions/image-classify/handler.js'), join(dir, 'function/handler.js'));
  symlinkSync(model, join(dir, 'function/model.onnx'));
  return dir;
}

/** Starts the runtime on `cores` cores (its cgroup made before the model loads); resolves once ready. */
async function start(dir: string, cg: Cgroups, id: string, cores: number[]): Promise<{ child: ChildProcess; url: string }> {
  const procs = cg.create(id, {});
  cg.setCpuset(id, cores);
  cg.setCfsQuotaUs(id, cfsQuotaUs(1, cores.length));
  // the shell joins the group first, then execs node: every thread of the runtime is in it
  const enter = procs.map((f) => `echo $$ > ${f}`).join(' && ');
  const child = spawn('sh', ['-c', `${enter} && exec "${process.execPath}" index.js`], {
    cwd: dir,
    env: { ...process.env, NODE_PATH: join(REPO_ROOT, 'node_modules'), PORT: '0', HOST: '127.0.0.1', MAX_BATCH_SIZE: '8',
      MLFAAS_CPU_CORES: String(cores.length), REPORT_INTERVAL_MS: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let port = 0;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${dir}: not ready in 300 s`)), 300_000);
    child.once('exit', (c) => reject(new Error(`runtime exited ${c}`)));
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (!l.startsWith('{')) return;
      const m = JSON.parse(l) as { type: string; port?: number };
      if (m.type === 'listening') port = m.port!;
      if (m.type === 'ready') {
        clearTimeout(t);
        resolve();
      }
    });
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function main() {
  const [dir, out] = process.argv.slice(2);
  if (!dir || !out) throw new Error('usage: tsx bench/rapp/measure-cpu.ts DIR OUT [--seconds S] [--only a,b]');
  const seconds = Number(arg('--seconds') ?? 2);
  const only = arg('--only')?.split(',');
  const cg = Cgroups.detect();
  if (!cg || !cg.hasCpuset) throw new Error('needs writable cgroups with a cpuset hierarchy (run as root)');
  const node = cg.nodeCores;
  if (node.length < Math.max(...CORES)) throw new Error(`needs ${Math.max(...CORES)} cores, this node has ${node.length}`);
  const csv = `${out}.csv`;
  const featFile = `${out}.features.json`;
  const features: Record<string, number[]> = existsSync(featFile) ? (JSON.parse(readFileSync(featFile, 'utf8')) as Record<string, number[]>) : {};
  const done = new Set(existsSync(csv) ? readFileSync(csv, 'utf8').split('\n').slice(1).map((l) => l.split(',')[0]) : []);
  if (!existsSync(csv)) writeFileSync(csv, HEADER);
  const models = readdirSync(dir).filter((f) => f.endsWith('.onnx')).map((f) => basename(f, '.onnx')).filter((m) => !only || only.includes(m)).sort();
  console.error(`${models.length} models, ${cpus()[0]?.model ?? 'cpu'}, cores ${CORES} x quotas ${QUOTAS} x batches ${BATCHES}, ${seconds} s per point`);
  for (const m of models) {
    if (done.has(m)) continue; // resumable: a model already measured is kept
    const file = join(dir, `${m}.onnx`);
    features[m] ??= featureVector(onnxFileFeatures(file)); // a second run reuses the first's (parsing a large graph takes minutes)
    const img = image(file);
    const rows: string[] = [];
    const t0 = Date.now();
    try {
      for (const k of CORES) {
        const id = `cpu-corpus-${process.pid}-${k}`;
        const cores = node.slice(0, k);
        const { child, url } = await start(img, cg, id, cores);
        try {
          const pts = await profileReplica(
            { url },
            { batches: BATCHES, quotas: QUOTAS, seconds, body: '{"random":1}' },
            async (q) => cg.setCfsQuotaUs(id, cfsQuotaUs(q, cores.length)),
            async () => undefined,
          );
          for (const p of pts) rows.push(`${m},${k},${p.quota},${p.batch},${p.latencyMs},${p.throughput}`);
        } finally {
          child.kill('SIGKILL');
          await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
          await cg.remove(id);
        }
      }
    } finally {
      rmSync(img, { recursive: true, force: true });
    }
    appendFileSync(csv, rows.map((r) => `${r}\n`).join(''));
    writeFileSync(featFile, JSON.stringify(features));
    console.error(`${m}: ${rows.length} points in ${((Date.now() - t0) / 1000).toFixed(0)} s; b1 q1 1 core ${rows[0]?.split(',')[4]} ms`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
