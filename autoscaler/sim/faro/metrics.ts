import type { SimRecord } from './engine';

/** The artifact's `analyze_result` figures for one run. */
export interface FaroMetrics {
  /** Jobs − mean over minutes of Σ_jobs min(slo / p99, 1), a dropped request counting as infinitely late. */
  readonly lostUtility: number;
  readonly meanClusterUtility: number;
  /** 1 − the fraction of requests within the SLO (dropped ones never are), averaged over minutes and jobs. */
  readonly sloViolationRate: number;
  /** Dropped / all requests. */
  readonly dropRate: number;
  readonly requests: number;
  readonly dropped: number;
  /** Mean utility per job over its minutes. */
  readonly perJobUtility: number[];
}

/** Latency given to a dropped request: numpy's nan_to_num(inf), the largest double, as the artifact. */
const DROPPED_MS = Number.MAX_VALUE;

/**
 * Per job, requests are binned by arrival minute; each bin's p99 (pandas' linear interpolation) gives
 * the utility min(slo / p99, 1). As the artifact, a job's bins are added to the cluster's series by
 * position (its k-th non-empty minute into slot k), the series has `slots` entries (361 for the 6-h
 * trace: the last minute's requests may spill over) and the mean is over all of them.
 */
export function analyzeFaro(rec: SimRecord, sloMs: number, opts: { quantile?: number; slots?: number; binS?: number } = {}): FaroMetrics {
  const q = opts.quantile ?? 0.99;
  const binS = opts.binS ?? 60;
  const nJobs = rec.jobNames.length;
  const n = rec.job.length;
  let maxBin = 0;
  for (let i = 0; i < n; i++) maxBin = Math.max(maxBin, Math.floor(rec.arrival[i] / binS));
  const nBins = maxBin + 1;
  const slots = opts.slots ?? Math.max(361, nBins);
  // Counting sort of requests into (job, bin) segments.
  const counts = new Int32Array(nJobs * nBins);
  for (let i = 0; i < n; i++) counts[rec.job[i] * nBins + Math.floor(rec.arrival[i] / binS)]++;
  const offs = new Int32Array(nJobs * nBins + 1);
  for (let k = 0; k < counts.length; k++) offs[k + 1] = offs[k] + counts[k];
  const fill = offs.slice(0, counts.length);
  const lat = new Float64Array(n);
  let dropped = 0;
  for (let i = 0; i < n; i++) {
    const k = rec.job[i] * nBins + Math.floor(rec.arrival[i] / binS);
    const isDrop = rec.dropped[i] === 1;
    if (isDrop) dropped++;
    lat[fill[k]++] = isDrop ? DROPPED_MS : (rec.end[i] - rec.arrival[i]) * 1e3;
  }
  const cluster = new Float64Array(slots);
  const sloSum = new Float64Array(slots);
  const sloCnt = new Float64Array(slots);
  const perJobUtility: number[] = [];
  for (let j = 0; j < nJobs; j++) {
    let pos = 0;
    let uSum = 0;
    for (let b = 0; b < nBins; b++) {
      const k = j * nBins + b;
      const len = counts[k];
      if (len === 0) continue;
      const seg = lat.subarray(offs[k], offs[k] + len);
      seg.sort();
      const p = quantileSorted(seg, q);
      const u = Math.min(sloMs / p, 1);
      let ok = 0;
      for (let i = 0; i < len; i++) if (seg[i] <= sloMs) ok++;
      if (pos < slots) {
        cluster[pos] += u;
        sloSum[pos] += ok / len;
        sloCnt[pos]++;
      }
      uSum += u;
      pos++;
    }
    perJobUtility.push(pos > 0 ? uSum / pos : 0);
  }
  let meanU = 0;
  for (let s = 0; s < slots; s++) meanU += cluster[s];
  meanU /= slots;
  let sloRate = 0;
  let rows = 0;
  for (let s = 0; s < slots; s++) {
    if (sloCnt[s] === 0) continue;
    sloRate += sloSum[s] / sloCnt[s];
    rows++;
  }
  sloRate = rows > 0 ? sloRate / rows : 1;
  return {
    lostUtility: nJobs - meanU,
    meanClusterUtility: meanU,
    sloViolationRate: 1 - sloRate,
    dropRate: n > 0 ? dropped / n : 0,
    requests: n,
    dropped,
    perJobUtility,
  };
}

/** pandas/numpy 'linear' quantile of a sorted array. */
export function quantileSorted(a: ArrayLike<number>, q: number): number {
  const pos = q * (a.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, a.length - 1);
  return a[lo] + (a[hi] - a[lo]) * (pos - lo);
}
