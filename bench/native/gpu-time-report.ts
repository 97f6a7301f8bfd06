/**
 * bench:native's GPU-time section (issue 22): framework-like requests on the stub driver
 * (bench/native/gpu-time.ts). Per repetition: the charge against the stub's true device time with
 * host gaps of 0, 1× and 5× the kernel time on 1 and 4 streams; delivered shares at quotas 0.25 and
 * 0.5 (with the unlimited reach measured beside them); two processes time-sliced on one device at
 * 0.3 / 0.7; throughput at quota 1.0 against unlimited, interleaved. With a baseline limiter
 * (BENCH_NATIVE_BASELINE=<liblimiter.so>, e.g. one built from an older commit) the charge and the
 * shares are measured for it too, in the same process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { type GapsOptions, type GapsProc, runGaps } from './gpu-time';
import { fmt, median, summarize } from './stats';

export const GAP_KERNEL_US = 200;
const GAPS = [0, 1, 5];
const STREAMS = [1, 4];

export interface GpuTimeRep {
  /** |charge error| % per `${gapFactor}x${streams}` */
  charge: Record<string, number>;
  baselineCharge: Record<string, number>;
  free: GapsProc;
  quota: Record<string, GapsProc>;
  baselineQuota: Record<string, GapsProc>;
  /** host work of 1× the kernel time per launch: unlimited reach, and the quotas' runs */
  free1x: GapsProc;
  quota1x: Record<string, GapsProc>;
  baselineQuota1x: Record<string, GapsProc>;
  shared: GapsProc[];
  baselineShared: GapsProc[];
  q1Rps: number;
  freeRps: number;
}

/** The charge of a run: cost_ns where the limiter has it, else what it took from its grants (older limiters). */
const chargeErr = (r: GapsProc) => {
  const charged = r.stats.cost_ns ?? r.stats.charged_ns ?? 0;
  return r.busyNs ? Math.abs((charged - r.busyNs) / r.busyNs) * 100 : NaN;
};

export async function measureGpuTime(build: string, dir: string, baselineSo?: string): Promise<GpuTimeRep> {
  const run = async (o: Partial<GapsOptions> & { quotas: Array<number | null> }) => {
    const d = mkdtempSync(path.join(dir, 'g-'));
    try {
      return await runGaps({ build, dir: d, seconds: 1.5, kernelUs: GAP_KERNEL_US, mix: true, ...o });
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  };
  const rep = { charge: {}, baselineCharge: {}, quota: {}, baselineQuota: {}, quota1x: {}, baselineQuota1x: {}, shared: [], baselineShared: [], q1Rps: 0,
    freeRps: 0 } as unknown as GpuTimeRep;
  for (const g of GAPS) {
    for (const s of STREAMS) {
      const key = `${g}x${s}`;
      // held at quota 1 (metered, never dry): the older limiter reports its charge only when metered
      rep.charge[key] = chargeErr((await run({ quotas: [1], gapUs: g * GAP_KERNEL_US, streams: s }))[0]);
      if (baselineSo) rep.baselineCharge[key] = chargeErr((await run({ quotas: [1], gapUs: g * GAP_KERNEL_US, streams: s, limiterSo: baselineSo }))[0]);
    }
  }
  rep.free = (await run({ quotas: [null], gapUs: 20, limiter: false }))[0];
  for (const q of [0.25, 0.5]) {
    rep.quota[q] = (await run({ quotas: [q], gapUs: 20, seconds: 2 }))[0];
    if (baselineSo) rep.baselineQuota[q] = (await run({ quotas: [q], gapUs: 20, seconds: 2, limiterSo: baselineSo }))[0];
  }
  // host work as long as the kernel after each launch: the device idles between kernels unless the
  // queue runs ahead; what a limiter charging wall time in flight charges as GPU time
  rep.free1x = (await run({ quotas: [null], gapUs: GAP_KERNEL_US, limiter: false }))[0];
  for (const q of [0.25, 0.5]) {
    rep.quota1x[q] = (await run({ quotas: [q], gapUs: GAP_KERNEL_US, seconds: 2 }))[0];
    if (baselineSo) rep.baselineQuota1x[q] = (await run({ quotas: [q], gapUs: GAP_KERNEL_US, seconds: 2, limiterSo: baselineSo }))[0];
  }
  rep.shared = await run({ quotas: [0.3, 0.7], gapUs: 20, shared: true, seconds: 2.5 });
  if (baselineSo) rep.baselineShared = await run({ quotas: [0.3, 0.7], gapUs: 20, shared: true, seconds: 2.5, limiterSo: baselineSo });
  // throughput at quota 1.0 against unlimited: interleaved, the best of 3 each (the host only ever takes away)
  for (let i = 0; i < 3; i++) {
    rep.freeRps = Math.max(rep.freeRps, (await run({ quotas: [null], gapUs: 20, limiter: false }))[0].rps);
    rep.q1Rps = Math.max(rep.q1Rps, (await run({ quotas: [1], gapUs: 20 }))[0].rps);
  }
  return rep;
}

export interface GpuTimeSummary {
  chargeErrPct: number;
  shareErrPts: number;
  quota1LossPct: number;
  markdown: string[];
}

export function summarizeGpuTime(reps: GpuTimeRep[], baseline: boolean): GpuTimeSummary {
  const S = (f: (r: GpuTimeRep) => number, digits = 3) => fmt(summarize(reps.map(f)), digits);
  const chargeKeys = GAPS.flatMap((g) => STREAMS.map((s) => `${g}x${s}`));
  const chargeErrPct = Math.max(...chargeKeys.map((k) => median(reps.map((r) => r.charge[k]))));
  const quotaErr = (q: number) => (r: GpuTimeRep) => Math.abs(r.quota[q].share - Math.min(q, r.free.share)) * 100;
  const sharedErr = (r: GpuTimeRep) => Math.max(Math.abs(r.shared[0].share - 0.3), Math.abs(r.shared[1].share - 0.7)) * 100;
  const shareErrPts = Math.max(median(reps.map(quotaErr(0.25))), median(reps.map(quotaErr(0.5))), median(reps.map(sharedErr)));
  const loss = (r: GpuTimeRep) => (1 - r.q1Rps / r.freeRps) * 100;
  const quota1LossPct = Math.max(0, median(reps.map(loss)));
  const base = (cell: string) => (baseline ? ` ${cell} |` : '');
  const md = [
    '## 7. GPU time, not host time: framework-like requests',
    '',
    `\`native/test/prog_gaps.c\`: each request launches 20 kernels cycling through three (${GAP_KERNEL_US / 2} µs × 4 blocks, ` +
      `${GAP_KERNEL_US} µs × 8, ${2 * GAP_KERNEL_US} µs × 32: costs per block differing 8×) with host work (a spin) after each launch, ` +
      'then synchronizes (one stream: cuStreamSynchronize; four, round-robin: cuCtxSynchronize). The stub reports the device time ' +
      'of the process\'s kernels (its ground truth); the limiter what it charged (`cost_ns`). The limiter learns each kernel\'s cost ' +
      'per block from CUDA events around a sample of its launches (`native/limiter/meter.c`).',
    '',
    `| host gap after each launch | streams | charge error, % of true device time (target ≤ 5) |${baseline ? ' baseline limiter |' : ''}`,
    `| --- | ---: | ---: |${baseline ? ' ---: |' : ''}`,
    ...GAPS.flatMap((g) => STREAMS.map((s) => `| ${g}× kernel (${g * GAP_KERNEL_US} µs) | ${s} | ${S((r) => r.charge[`${g}x${s}`], 2)} |` +
      base(S((r) => r.baselineCharge[`${g}x${s}`], 1)))),
    '',
    'Delivered device share (device time of the completed requests / wall time, after 300 ms) with 20 µs of host work per launch; ' +
      '"expected" = min(quota, what the same loop reached unlimited in the same repetition).',
    '',
    `| quota | used | unlimited reach | error (pts) |${baseline ? ' baseline limiter used |' : ''}`,
    `| --- | --- | --- | ---: |${baseline ? ' --- |' : ''}`,
    ...[0.25, 0.5].map((q) => `| ${q} | ${S((r) => r.quota[q].share)} | ${S((r) => r.free.share)} | ${S(quotaErr(q), 2)} |` +
      base(S((r) => r.baselineQuota[q].share))),
    '',
    `The same with host work as long as the kernel (${GAP_KERNEL_US} µs) after each launch (the device idles between kernels ` +
      'whenever the host falls behind; a spin on a loaded host is slower, so the unlimited reach varies): not in the headline, ' +
      'which takes the rows above, where the unlimited reach is far above both quotas.',
    '',
    `| quota | used | unlimited reach | error (pts) |${baseline ? ' baseline limiter used |' : ''}`,
    `| --- | --- | --- | ---: |${baseline ? ' --- |' : ''}`,
    ...[0.25, 0.5].map((q) => `| ${q} | ${S((r) => r.quota1x[q].share)} | ${S((r) => r.free1x.share)} | ` +
      `${S((r) => Math.abs(r.quota1x[q].share - Math.min(q, r.free1x.share)) * 100, 2)} |` + base(S((r) => r.baselineQuota1x[q].share))),
    '',
    'Two processes time-sliced on ONE device timeline (STUB_CUDA_SHM: no MPS), quotas 0.3 / 0.7, the same requests:',
    '',
    `| quotas | used | charge error (%) | max error (pts) |${baseline ? ' baseline limiter used |' : ''}`,
    `| --- | --- | --- | ---: |${baseline ? ' --- |' : ''}`,
    `| 0.3 / 0.7 | ${S((r) => r.shared[0].share)} / ${S((r) => r.shared[1].share)} | ${S((r) => Math.abs(r.shared[0].chargeErrPct), 2)} / ` +
      `${S((r) => Math.abs(r.shared[1].chargeErrPct), 2)} | ${S(sharedErr, 2)} |` +
      base(`${S((r) => r.baselineShared[0].share)} / ${S((r) => r.baselineShared[1].share)}`),
    '',
    `Quota 1.0: ${S((r) => r.q1Rps, 1)} requests/s against ${S((r) => r.freeRps, 1)} without the limiter (best of 3 interleaved runs ` +
      `each per repetition): throughput loss ${S(loss, 2)} % (target ≤ 2).`,
    '',
  ];
  return { chargeErrPct, shareErrPts, quota1LossPct, markdown: md };
}
