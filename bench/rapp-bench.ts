/**
 * bench:rapp (issue 12): the learned latency predictor on RaPP's V100 labels and on the platform's own CPU corpus.
 * 1. `bench/rapp/v100_cv.py` (Debian's python3-torch, /usr/bin/python3) trains and cross-validates
 *    ours, the static-features-only baseline and the analytic baseline: leave-models-out (5 folds)
 *    and unseen configurations (20 % of every model's rows); then trains on everything and exports
 *    the model to ONNX in a temporary folder (trained on unlicensed data: never kept).
 * 2. Here, the exported model runs in onnxruntime-node, as the autoscaler runs it: the features
 *    are rebuilt in TypeScript from RaPP's graph JSON and checked against Python's, and the
 *    predictions against Python's.
 * 3. Prediction cost: one function's whole grid (one model run), a capability query on the
 *    predicted profile, 3,200 functions' grids, and a hybrid decision round for 3,200 functions on
 *    predicted profiles beside the same round on measured ones.
 * Writes bench/results/rapp.md; last line
 * `rapp: mape_unseen_models=<x> mape_unseen_configs=<y> cpu_mape_unseen_models=<z>`.
 * 4. The CPU corpus (bench/rapp/cpu_cv.py on bench/rapp/data/cpu-corpus.*): leave-models-out and
 *    unseen configurations, ours vs static vs analytic, three seeds.
 * 5. Live (bench/rapp/deploy-time.ts; BENCH_RAPP_LIVE=0 skips it): `mlfaas up` with the profile
 *    measured and predicted, the time from a replica ready to a profile the autoscaler decides on.
 * BENCH_RAPP_EPOCHS (default 20) sets the V100 training epochs; BENCH_RAPP_MEMBERS (default 3) the
 * networks averaged per prediction (every network, baselines alike; 1 reproduces the single-network runs).
 * BENCH_RAPP_ONNX_DIR: a folder of the V100 models exported to ONNX
 * (`/usr/bin/python3 bench/rapp/export_corpus.py DIR <the 67 names>`, ~14 GB, ~8 min) adds the
 * variant `onnx`: features of each model's own ONNX file and its batch-1 profile points only.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProfileCapability, LatencyPoint } from '../autoscaler/rapp/profile-capability';
import { LatencyModel } from '../autoscaler/rapp/latency-model';
import { featureVector, onnxFileFeatures } from '../autoscaler/rapp/onnx-features';
import { predictProfile } from '../autoscaler/rapp/predicted-profile';
import { readRapp, readRappFile } from '../autoscaler/sim/latency-data';
import { headline, type Interval } from './inference/aggregate';
import { REPORT_MODELS, REPORT_SEEDS, runReportingSet } from './inference/report-set';
import { tickTimeMs, TICK_MODELS } from './inference/tick';
import { table } from './lib/results';
import { featureRow, modelVector, readGraphs } from './rapp/v100-features';
import { deployTimes, profileMape } from './rapp/deploy-time';

const DATA = process.env.MLFAAS_DATA_DIR ?? '/work/shared/data';
const EPOCHS = Number(process.env.BENCH_RAPP_EPOCHS ?? 20);
const MEMBERS = Number(process.env.BENCH_RAPP_MEMBERS ?? 3);
const PY = '/usr/bin/python3';
const log = (s: string) => process.stderr.write(`[bench:rapp] ${s}\n`);
const GRID = { batches: [1, 2, 4, 8], smShares: Array.from({ length: 20 }, (_, i) => (i + 1) / 20),
  quotas: Array.from({ length: 10 }, (_, i) => (i + 1) / 10) };

interface CvResult {
  models: number;
  rows: number;
  seed: number;
  epochs: number;
  members: number;
  unseen_models: Record<'ours' | 'static' | 'analytic', number> & { onnx?: number };
  unseen_configs: Record<'ours' | 'static' | 'analytic', number> & { onnx?: number };
  unseen_models_per_model: Record<string, number>;
  seconds: number;
}

interface CpuCvResult {
  seeds: number[];
  epochs: number;
  models: number;
  rows: number;
  points_per_model: number;
  unseen_models: Record<'ours' | 'static' | 'analytic', number>;
  unseen_configs: Record<'ours' | 'static' | 'analytic', number>;
  unseen_models_by_seed: Record<'ours' | 'static' | 'analytic', number[]>;
  unseen_configs_by_seed: Record<'ours' | 'static' | 'analytic', number[]>;
  unseen_models_per_model: Record<string, number>;
  members: number;
  retest: { points: number; mape: number; per_model: Record<string, number> } | null;
  seconds: number;
}

function haveTorch(): boolean {
  try {
    execFileSync(PY, ['-c', 'import torch'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  if (!haveTorch()) {
    console.error('bench:rapp trains with Debian\'s PyTorch: apt-get install -y python3-torch (for /usr/bin/python3)');
    process.exit(1);
  }
  const t0 = Date.now();
  const out = mkdtempSync(join(tmpdir(), 'mlfaas-rapp-'));
  try {
    const onnxArgs: string[] = [];
    if (process.env.BENCH_RAPP_ONNX_DIR) {
      const dir = process.env.BENCH_RAPP_ONNX_DIR;
      const vectors: Record<string, number[]> = {};
      for (const f of readdirSync(dir).filter((x) => x.endsWith('.onnx'))) vectors[f.slice(0, -5)] = featureVector(onnxFileFeatures(join(dir, f)));
      writeFileSync(join(out, 'onnx-vectors.json'), JSON.stringify(vectors));
      onnxArgs.push('--onnx-features', join(out, 'onnx-vectors.json'));
      log(`features of ${Object.keys(vectors).length} ONNX files from ${dir}`);
    }
    log(`training and cross-validating (${EPOCHS} epochs; about 6 min on 2 cores, 8 with BENCH_RAPP_ONNX_DIR)`);
    const cv = JSON.parse(execFileSync(PY,
      [join(__dirname, 'rapp', 'v100_cv.py'), '--data', DATA, '--out', out, '--epochs', String(EPOCHS), '--members', String(MEMBERS), ...onnxArgs],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 }).trim().split('\n').pop()!) as CvResult;

    log('CPU corpus: cross-validating on bench/rapp/data/cpu-corpus.*');
    const cpu = JSON.parse(execFileSync(PY, [join(__dirname, 'rapp', 'cpu_cv.py'), '--members', String(MEMBERS)],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 }).trim().split('\n').pop()!) as CpuCvResult;
    const live = process.env.BENCH_RAPP_LIVE === '0' ? [] : await deployTimes(log);

    // the exported model in onnxruntime-node, on features rebuilt here
    const model = await LatencyModel.load(join(out, 'rapp-v100.onnx'));
    const sample = JSON.parse(readFileSync(join(out, 'sample.json'), 'utf8')) as { rows: Array<[string, number, number, number]>; x: number[][]; y: number[] };
    const graphs = readGraphs(DATA);
    const vecs = new Map(Object.entries(graphs).map(([m, g]) => [m, modelVector(g)]));
    let featDiff = 0;
    const rows = sample.rows.map(([m, b, s, q], i) => {
      const r = featureRow(graphs[m], vecs.get(m)!, b, s, q);
      r.forEach((v, k) => (featDiff = Math.max(featDiff, Math.abs(Math.fround(v) - sample.x[i][k]) / Math.max(1, Math.abs(sample.x[i][k])))));
      return r;
    });
    const ts = await model.predictMs(rows);
    const predDiff = Math.max(...sample.y.map((y, i) => Math.abs(ts[i] - y) / y));

    // prediction cost
    const one: number[] = [];
    let profile: LatencyPoint[] = [];
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      profile = await predictProfile(model, GRID, (b, s, q) => featureRow(graphs.resnet50, vecs.get('resnet50')!, b, s, q));
      one.push(performance.now() - t);
    }
    const cap = new ProfileCapability({ f: profile });
    const qt = performance.now();
    let sink = 0;
    for (let i = 0; i < 100_000; i++) sink += cap.capability('f', 1 + (i & 3), 0.05 + (i % 19) * 0.05, 0.1 + (i % 9) * 0.1);
    const queryUs = ((performance.now() - qt) / 100_000) * 1000;
    const names = Object.keys(graphs);
    const t3 = performance.now();
    for (let i = 0; i < 3200; i++) {
      const m = names[i % names.length];
      await predictProfile(model, GRID, (b, s, q) => featureRow(graphs[m], vecs.get(m)!, b, s, q));
    }
    const all3200S = (performance.now() - t3) / 1000;
    const predicted: Record<string, LatencyPoint[]> = {};
    for (const m of TICK_MODELS) predicted[m] = await predictProfile(model, GRID, (b, s, q) => featureRow(graphs[m], vecs.get(m)!, b, s, q));
    const tickPred = tickTimeMs(DATA, 3200, 6, true, {}, predicted);
    const tickMeas = tickTimeMs(DATA, 3200, 6, true);
    // the predicted surface against the measured one on the tick's models (trained on them: in-sample)
    const rapp = readRapp(DATA, TICK_MODELS);
    const inSample = TICK_MODELS.map((m) => {
      const p = new ProfileCapability({ f: predicted[m] });
      const e = rapp[m].map((x) => Math.abs(p.latencyMs('f', x.batch, x.smShare, x.quota) - x.latencyMs) / x.latencyMs);
      return e.reduce((a, b) => a + b, 0) / e.length;
    });

    // bench:inference's reporting set, the policies told the leave-models-out predictions
    log('reporting set: re-measured profiles, then predicted ones');
    const lomo = readRappFile(join(out, 'lomo.csv'), REPORT_MODELS);
    const measuredRun = runReportingSet(DATA, { coldStartS: 20 });
    const predictedRun = runReportingSet(DATA, { coldStartS: 20, toldProfiles: lomo });
    const ci = (i: Interval) => `${i.mean.toFixed(2)} [${i.lo.toFixed(2)}, ${i.hi.toFixed(2)}]`;
    const simRows = ([['re-measured profile (bench:inference)', measuredRun], ['leave-models-out prediction', predictedRun]] as const).map(([label, run]) => {
      const h = headline(run.perSeed);
      const sum = (k: 'violations' | 'requests' | 'cost') => run.perSeed.reduce((a, t) => a + t.hybrid[k], 0);
      return [label, ((100 * sum('violations')) / Math.max(1, sum('requests'))).toFixed(2), (sum('cost') / run.perSeed.length).toFixed(2),
        ci(h.violationVsStatic), ci(h.costVsKpa), ci(h.kpaViolation)];
    });

    const f3 = (x: number) => x.toFixed(3);
    const sections = [
      `Command: \`npm run bench:rapp\` (tsx bench/rapp-bench.ts; BENCH_RAPP_EPOCHS=${EPOCHS}, BENCH_RAPP_MEMBERS=${MEMBERS}: each ` +
      `prediction the mean ln latency of that many networks trained from different seeds, baselines alike); RaPP's V100 labels, ${cv.rows} ` +
      `rows over the ${cv.models} models that have graph features; seed ${cv.seed}; ${((Date.now() - t0) / 1000).toFixed(0)} s on this ` +
      `machine (${cv.seconds} s of it training in Python).`,
      `MAPE (mean |predicted − measured| ÷ measured). **ours**: the operator graph pooled to a vector (means and log-sums of RaPP's 32 ` +
      `static operator features, mean of its 6 runtime ones), its graph features, the configuration, and the model's profiled batch-1 ` +
      `latency at the row's quota (RaPP's 5 runtime graph features are those latencies at quotas 0.2-1; the network predicts relative to ` +
      `it): an MLP (2 × 256) on ln latency. **static**: the same without runtime features (DIPPM-like). **analytic**: latency = ` +
      `c·batch/(share·quota) with c fitted per model (on its training rows for unseen configurations; on 3 profiled points of an unseen model).\n\n` +
        table(['split', 'ours', 'static', 'analytic', 'target (ours)'], [
          ['unseen models (leave-models-out, 5 folds)', f3(cv.unseen_models.ours), f3(cv.unseen_models.static), f3(cv.unseen_models.analytic), '≤ 0.05'],
          ['unseen configurations (20 % of each model)', f3(cv.unseen_configs.ours), f3(cv.unseen_configs.static), f3(cv.unseen_configs.analytic), '≤ 0.04'],
        ]) +
        "\n\nHAS-GPU's \"around 5 %\" (Sec. 4.2) is measured on a random split of the samples (42,720 training, 5,340 validation, 5,340 " +
        "test), i.e. on unseen configurations of models the predictor was trained on: this table's second row. The paper gives no " +
        "leave-models-out figure; the issue's 0.05 for unseen models is that number applied to the harder split." +
        (cv.unseen_models.onnx !== undefined
          ? `\n\n**onnx** (what the platform itself has: the features of each model's own ONNX file, \`autoscaler/rapp/onnx-features.ts\`, ` +
              `and the batch-1 latencies at quotas 0.2-1 a deploy-time profile measures; not RaPP's per-operator runtime shares): unseen ` +
              `models ${f3(cv.unseen_models.onnx)}, unseen configurations ${f3(cv.unseen_configs.onnx!)}.`
          : '\n\nThe variant on features of each model\'s own ONNX file runs with BENCH_RAPP_ONNX_DIR (see the header of bench/rapp-bench.ts).'),
      `**CPU** (the platform's own measurements, \`bench/rapp/data/cpu-corpus.*\`: ${cpu.models} torchvision architectures with random ` +
      `weights, each served by the ml-inference runtime in its own cgroup and measured by the platform's capability profiler, end to end ` +
      `over HTTP, at cores {1, 2} × CFS quota {1, 0.5, 0.25} × batch {1, 2, 4, 8}: ${cpu.rows} rows, by ` +
      `\`bench/rapp/measure-cpu.ts\`${cpu.retest
        ? `; each point is the mean of two runs of that command (\`cpu-corpus.csv\`, \`cpu-corpus-2.csv\`), which differ from each other by ` +
          `${f3(cpu.retest.mape)} MAPE over ${cpu.retest.points} points: the measurement's own noise, a floor for any predictor scored against one run`
        : ''}). **ours**: the features of the model's own ONNX file, the configuration and ONE measured point (batch 1, one core, quota 1, ` +
      `the first point a deploy-time profile measures): the MLP (2 × 64) predicts ln latency relative to that point scaled linearly ` +
      `(b ÷ (cores · q)). **static**: the graph alone. **analytic**: the measured point scaled linearly (for unseen configurations, c fitted ` +
      `on the model's training rows). The measured point itself is never a test row. Mean over seeds ${cpu.seeds.join(', ')} (fold ` +
      `assignment and initialisation), per seed in brackets; ${cpu.epochs} epochs; ${cpu.seconds} s.\n\n` +
        table(['split', 'ours', 'static', 'analytic', 'target (ours)'], (['unseen_models', 'unseen_configs'] as const).map((k) => [
          k === 'unseen_models' ? 'CPU, unseen models (leave-models-out, 5 folds)' : 'CPU, unseen configurations (20 % of each model)',
          ...(['ours', 'static', 'analytic'] as const).map((v) => `${f3(cpu[k][v])} [${cpu[`${k}_by_seed`][v].map(f3).join(', ')}]`),
          k === 'unseen_models' ? '≤ 0.10' : '—',
        ])) +
        `\n\nWorst unseen models (seed ${cpu.seeds[0]}): ${Object.entries(cpu.unseen_models_per_model)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 5)
          .map(([m, e]) => `${m} ${f3(e)}${cpu.retest?.per_model[m] !== undefined ? ` (retest ${f3(cpu.retest.per_model[m])})` : ''}`)
          .join(', ')}.`,
      live.length
        ? `**Live: deploy to a profile the autoscaler decides on** (\`mlfaas up\` with the example functions, once with ` +
            `MLFAAS_PROFILE_MODE=measured, the platform before this issue, and once with the predictor, its default now; ` +
            `MLFAAS_PROFILE_SECONDS=1; times from the function's first replica being ready; the autoscaler holds a function until it has a ` +
            `profile, then decides at its next 1 s tick). MAPE against the profile measured in the other run (image-classify is ` +
            `MobileNetV2, one of the corpus's models: in-sample; digits-classify's MLP is not in the corpus):\n\n` +
          table(['mode', 'function', 'first profile (stage) after ready', 'final profile after ready', 'points measured',
            'MAPE of first / final vs measured'], live.map((r) => {
            const ref = live.find((x) => x.mode === 'measured' && x.fn === r.fn)?.final;
            const err = (pr?: typeof r.final) => (pr && ref && r.mode === 'predicted' ? f3(profileMape(pr, ref)) : '—');
            return [r.mode, r.fn, r.firstS === undefined ? 'none in 180 s' : `${r.firstS.toFixed(2)} s (${r.firstSource})`,
              r.finalS === undefined ? 'none in 180 s' : `${r.finalS.toFixed(2)} s`, String(r.measuredPoints ?? '—'),
              r.mode === 'predicted' ? `${err(r.first)} / ${err(r.final)}` : '—'];
          }))
        : 'Live deploy timing skipped (BENCH_RAPP_LIVE=0).',
      `The reporting set of bench:inference (\`bench/inference/report-set.ts\`: 30 functions on one cluster, ` +
      `seeds ${REPORT_SEEDS.join(', ')}, interference charged, device cost) with every policy told, for each function's model, the profile ` +
      `predicted by the fold model that never saw that model (leave-models-out MAPE on ` +
      `them: ${REPORT_MODELS.map((m) => `${m} ${f3(cv.unseen_models_per_model[m])}`).join(', ')}), beside the re-measured profile ` +
      `bench:inference tells them. hybrid's violations and device $ per seed; headline ratios mean [95 % interval]:\n\n` +
        table(['policies told', 'hybrid violations %', 'hybrid device $', 'violation_ratio_vs_static', 'cost_ratio_vs_kpa', 'kpa_violation_ratio'], simRows),
      `The exported model in onnxruntime-node (as the autoscaler runs it) on ${rows.length} sampled rows: features rebuilt in TypeScript ` +
      `differ from Python's by at most ${featDiff.toExponential(1)} (relative), predictions by at most ${predDiff.toExponential(1)}.`,
      'Prediction cost (single-threaded onnxruntime, this 2-core machine):\n\n' +
        table(['what', 'time'], [
          [`one function's whole grid (${GRID.batches.length * GRID.smShares.length * GRID.quotas.length} configurations, one run), median of 7`,
            `${median(one).toFixed(1)} ms`],
          ['one capability query on the predicted profile (ProfileCapability)', `${queryUs.toFixed(2)} µs`],
          ['3,200 functions\' grids at deploy (one run each)', `${all3200S.toFixed(1)} s`],
          ['hybrid decision round, 3,200 functions, predicted profiles (median of 5)',
            `${tickPred.medianMs.toFixed(1)} ms (first ${tickPred.firstMs.toFixed(0)} ms)`],
          ['the same round on measured profiles', `${tickMeas.medianMs.toFixed(1)} ms (first ${tickMeas.firstMs.toFixed(0)} ms)`],
        ]) +
        `\n\nThe final model's surface against the measured one on the tick's 8 models (in-sample: it was trained on them): ` +
        `MAPE ${inSample.map(f3).join(', ')}.`,
      'Not yet (issue 12): the V100 targets (message passing over the graph, a nested split for choices), GPU replicas profiled from the ' +
      'predictor (the V100-trained model cannot ship: its data has no licence), and the inference and live benchmarks at GPU scale on ' +
      'predicted profiles beyond the reporting set above.',
    ];
    const last = `rapp: mape_unseen_models=${f3(cv.unseen_models.ours)} mape_unseen_configs=${f3(cv.unseen_configs.ours)} ` +
      `cpu_mape_unseen_models=${f3(cpu.unseen_models.ours)}`;
    const body = [...sections, last].join('\n\n');
    mkdirSync(join(__dirname, 'results'), { recursive: true });
    writeFileSync(join(__dirname, 'results', 'rapp.md'), `# RaPP latency predictor benchmark\n\n${body}\n`);
    console.log(body);
    if (sink < 0) console.log(sink);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
