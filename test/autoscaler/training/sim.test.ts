import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, parseArgs } from '../../../autoscaler/sim/training/cli';
import { maxGpuBaseline, maxGpuElasticFlow, parseTrace } from '../../../autoscaler/sim/training/data';
import { overheadSeconds, simulate, type SimJob } from '../../../autoscaler/sim/training/engine';
import { getPolicy } from '../../../autoscaler/training/registry';
import { curveFromProfile } from '../../../autoscaler/training/profile';
import { linear } from './fixtures';

const job = (id: string, submit: number, iterations: number, deadline?: number, requested = 1): SimJob => ({
  id, model: 'm', submitTime: submit, iterations, deadline, batchSize: 64, requestedGpus: requested,
  curve: linear(8), maxGpusElastic: 8, maxGpusBaseline: 8,
});

describe('overhead model (utils.estimate_overhead)', () => {
  test.each([
    { gpus: 1, total: 128, cache: true, restart: false, want: 2 },
    { gpus: 1, total: 128, cache: false, restart: false, want: 4 },
    { gpus: 8, total: 128, cache: false, restart: false, want: 10 },
    { gpus: 8, total: 128, cache: false, restart: true, want: 37 },
    { gpus: 8, total: 512, cache: true, restart: true, want: 7 },
    { gpus: 8, total: 512, cache: false, restart: true, want: 62 },
  ])('$gpus GPUs of $total, cache=$cache restart=$restart → $want s', ({ gpus, total, cache, restart, want }) => {
    expect(overheadSeconds(gpus, total, cache, restart)).toBe(want);
  });
});

describe('simulator', () => {
  const cfg = { cluster: { nodes: 1, gpusPerNode: 8 }, slotSeconds: 60 };
  test('one job alone: end = start + overhead + ceil(work / throughput(8))', () => {
    const r = simulate([job('a', 0, 8000, 2000)], { ...cfg, policy: getPolicy('elasticflow') });
    // 8 GPUs → 8 it/s → 1000 s, plus 2 + 2·(3+1) = 10 s first-event overhead.
    expect(r.jobs[0].endTime).toBe(1010);
    expect(r).toMatchObject({ accepted: 1, declined: 0, ratio: 1 });
  });

  test('no-overhead mode and the slot grid: an arrival inside the slot waits for the next decision', () => {
    const r = simulate([job('a', 0, 80, 1000, 8), job('b', 10, 80, 1000, 8)], { ...cfg, policy: getPolicy('fifo'), overhead: 'none' });
    const b = r.jobs.find((j) => j.id === 'b')!;
    expect(b.startTime).toBe(60);
    expect(b.endTime).toBe(70);
  });

  test('admission drops what cannot be guaranteed; EDF runs it late', () => {
    const trace = [job('a', 0, 8 * 900, 1000), job('b', 0, 8 * 900, 1000)];
    // ours judges each arrival by itself: the second one is declined
    const ours = simulate(trace, { ...cfg, policy: getPolicy('mlfaas') });
    expect(ours.jobs.filter((j) => !j.admitted)).toHaveLength(1);
    expect(ours.accepted).toBe(1);
    // the artifact judges the simultaneous arrivals as one event: both are declined
    const ef = simulate(trace, { ...cfg, policy: getPolicy('elasticflow') });
    expect(ef.jobs.filter((j) => !j.admitted)).toHaveLength(2);
    expect(ef.accepted).toBe(0);
    const e = simulate(trace, { ...cfg, policy: getPolicy('edf') });
    expect(e.jobs.every((j) => j.endTime !== undefined)).toBe(true);
    expect(e.accepted).toBe(1);
  });

  test('best-effort jobs are not counted in the ratio', () => {
    const r = simulate([job('a', 0, 800, 1000), job('be', 0, 800)], { ...cfg, policy: getPolicy('elasticflow') });
    expect(r.accepted + r.declined).toBe(1);
    expect(r.jobs.find((j) => j.id === 'be')!.endTime).toBeDefined();
  });
});

describe('trace data', () => {
  test('parses both column layouts; best_effort rows have no deadline', () => {
    const a = parseTrace('job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\nx,5,100,bert,50,64,2,40\n');
    expect(a[0]).toMatchObject({ id: 'x', submitTime: 5, iterations: 100, deadline: 50, requestedGpus: 2 });
    const b = parseTrace('job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,duration,best_effort\n0,0,7,resnet50,9,256,1,3,1\n');
    expect(b[0].deadline).toBeUndefined();
  });
  test.each([
    { model: 'bert', batch: 64, gpu: 'A100' as const, want: 8 },
    { model: 'gpt2', batch: 256, gpu: 'A100' as const, want: 32 },
    { model: 'deepspeech2', batch: 32, gpu: 'A100' as const, want: 32 },
    { model: 'resnet50', batch: 256, gpu: 'A100' as const, want: 64 },
    { model: 'ncf', batch: 32768, gpu: 'T4' as const, want: 1 },
    { model: 'yolov3', batch: 64, gpu: 'T4' as const, want: 4 },
  ])('ElasticFlow max_gpu($model, $batch, $gpu) = $want', ({ model, batch, gpu, want }) => {
    expect(maxGpuElasticFlow(model, batch, gpu)).toBe(want);
  });
  test('baseline max_gpu caps at min(64, batch)', () => {
    expect(maxGpuBaseline(linear(64), 32)).toBe(32);
  });
});

describe('profiling curve', () => {
  test('fits the 1- and 2-worker profile exactly and extrapolates sub-linearly', () => {
    const c = curveFromProfile([{ gpus: 1, iterPerSec: 10 }, { gpus: 2, iterPerSec: 16 }], 8);
    expect(c.gpus).toEqual([1, 2, 4, 8]);
    expect(c.iterPerSec[0]).toBeCloseTo(10);
    expect(c.iterPerSec[1]).toBeCloseTo(16);
    expect(c.iterPerSec[2]).toBeGreaterThan(16);
    expect(c.iterPerSec[3] / 8).toBeLessThan(c.iterPerSec[2] / 4);
  });
});

describe('mlfaas sim training CLI', () => {
  test('prints the ratio and JCT figures for a trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'simtrain-'));
    const trace = join(dir, 't.csv');
    writeFileSync(trace,
      'job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,duration\n0,0,1000,resnet50,5000,64,1,150\n1,100,1000,bert,400,64,1,170\n');
    const out: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    try {
      expect(await main(['--trace', trace, '--cluster', 'n1g8', '--slot', '60', '--gpu', 'A100', '--policy', 'elasticflow'])).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(out.join('')).toMatch(/deadline_satisfactory_ratio=1\.000 accepted=2 declined=0 jobs=2/);
    expect(out.join('')).toMatch(/avg_jct_s=\d+ p95_jct_s=\d+/);
  });
  test('bad flags exit 2', async () => {
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main(['--trace'])).toBe(2);
      expect(await main(['--trace', 'x', '--cluster', 'n1g8', '--policy', 'nope'])).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(parseArgs(['--slot=240'])).toEqual({ slot: '240' });
  });
});
