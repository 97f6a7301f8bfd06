import { Capability } from '../inference/types';

/**
 * One measured point of a function's latency profile: a batch's latency at an SM share and a quota.
 * No throughput, unlike the provider contract's `ProfilePoint` (gateway/providers/capability-profile.ts).
 */
export interface LatencyPoint {
  batch: number;
  /** 0..1 */
  smShare: number;
  /** 0..1 */
  quota: number;
  latencyMs: number;
}

interface BatchGrid {
  smShares: number[];
  quotas: number[];
  /** Throughput in batches per ms (1/latency), row-major [sm][quota]; NaN where not measured. */
  rate: Float64Array;
}

interface FnProfile {
  batches: number[];
  grids: BatchGrid[];
  smShares: number[];
  quotas: number[];
  /** The grid() answer, built once. */
  view: { batches: number[]; smShares: number[]; quotas: number[] };
  /** latencyMs memo keyed by batch, SM share and quota packed in a number (see `pack`). */
  memo: Map<number, number>;
  /** Dense latencyMs memo for measured (batch, SM share, quota) points, [b][s][q]; NaN: not yet. */
  dense?: Float64Array;
  smIdx: Map<number, number>;
  qIdx: Map<number, number>;
}

const uniq = (xs: number[]) => [...new Set(xs.map((x) => Math.round(x * 1e6) / 1e6))].sort((a, b) => a - b);

/**
 * One small-integer key for (batch, smShare, quota) with shares on a 1e-3 grid (a V8 small
 * integer, so Map keys allocate nothing); NaN (uncacheable) off that grid or for batch > 1000.
 */
export function pack(batch: number, smShare: number, quota: number): number {
  const s = Math.round(smShare * 1e3);
  const q = Math.round(quota * 1e3);
  if (!(batch >= 0 && batch <= 1000) || (batch | 0) !== batch || s > 1000 || q > 1000 || s < 0 || q < 0 ||
    Math.abs(s - smShare * 1e3) > 1e-6 || Math.abs(q - quota * 1e3) > 1e-6) return NaN;
  return (batch * 1001 + s) * 1001 + q;
}

/** bracket()'s answer, in module scratch so the hot path allocates nothing: i0, i1 and the weight of xs[i1]. */
let bI0 = 0;
let bI1 = 0;
let bW = 0;

/** Index i with xs[i] ≤ x < xs[i+1] (clamped) and the weight of xs[i+1], into bI0, bI1, bW. */
function bracket(xs: number[], x: number): void {
  if (xs.length === 1 || x <= xs[0]) {
    bI0 = bI1 = 0;
    bW = 0;
    return;
  }
  const last = xs.length - 1;
  if (x >= xs[last]) {
    bI0 = bI1 = last;
    bW = 0;
    return;
  }
  let i = 0;
  while (xs[i + 1] < x) i++;
  bI0 = i;
  bI1 = i + 1;
  bW = (x - xs[i]) / (xs[i + 1] - xs[i]);
}

/**
 * Capability from a measured profile (the platform's deploy-time profile live, the latency data in
 * the simulator). Between grid points it interpolates the *rate* (1/latency) bilinearly in SM share
 * and quota, because latency under a time quota grows like 1/quota; between batch sizes linearly in
 * latency. Below the smallest quota it scales latency by quota_min/quota; outside the SM range it
 * clamps; above the largest batch it assumes latency grows linearly with the batch. A missing grid
 * corner falls back to the measured corners around it.
 */
export class ProfileCapability implements Capability {
  private readonly fns = new Map<string, FnProfile>();
  private readonly refuseBelow: boolean;

  /**
   * Functions given the very same points array here share one profile (and so one
   * `profileKey`, and the caches policies keep per key).
   *
   * `belowMeasured: 'refuse'` answers Infinity (capability 0) for a quota under the smallest one
   * measured, so a policy plans only over configurations the profile covers. The live loop uses it:
   * its profiles are measured end to end at quotas 1 / 0.5 / 0.25, and at an extrapolated 0.1 of a
   * core the model promised digits-classify ~230 req/s while bursts of 60–120 req/s missed its 50 ms
   * SLO (CFS throttling tails a throughput profile does not show; bench:live). The simulator's
   * RaPP profiles keep `'scale'` (latency × q_min/q), the default.
   */
  constructor(profiles: Record<string, LatencyPoint[]>, opts: { belowMeasured?: 'scale' | 'refuse' } = {}) {
    this.refuseBelow = opts.belowMeasured === 'refuse';
    const seen = new Map<LatencyPoint[], FnProfile>();
    for (const [fn, points] of Object.entries(profiles)) {
      const shared = seen.get(points);
      if (shared) this.fns.set(fn, shared);
      else {
        this.set(fn, points);
        seen.set(points, this.fns.get(fn)!);
      }
    }
  }

  /** Replaces one function's profile (the live loop re-profiles on deploy); its profileKey changes. */
  set(fn: string, points: LatencyPoint[]): void {
    const good = points.filter((p) => p.latencyMs > 0 && Number.isFinite(p.latencyMs));
    if (good.length === 0) throw new Error(`profile for ${fn}: no usable points`);
    const batches = uniq(good.map((p) => p.batch));
    const grids = batches.map((b) => {
      const pts = good.filter((p) => Math.abs(p.batch - b) < 1e-9);
      const smShares = uniq(pts.map((p) => p.smShare));
      const quotas = uniq(pts.map((p) => p.quota));
      const rate = new Float64Array(smShares.length * quotas.length).fill(NaN);
      for (const p of pts) {
        const i = smShares.indexOf(Math.round(p.smShare * 1e6) / 1e6);
        const j = quotas.indexOf(Math.round(p.quota * 1e6) / 1e6);
        rate[i * quotas.length + j] = 1 / p.latencyMs;
      }
      return { smShares, quotas, rate };
    });
    const smShares = uniq(good.map((p) => p.smShare));
    const quotas = uniq(good.map((p) => p.quota));
    const smIdx = new Map(smShares.map((v, i) => [Math.round(v * 1e3), i]));
    const qIdx = new Map(quotas.map((v, i) => [Math.round(v * 1e3), i]));
    this.fns.set(fn, { batches, grids, smShares, quotas, view: { batches, smShares, quotas }, memo: new Map(), smIdx, qIdx });
  }

  /** The profile object itself: replaced by `set`, shared by functions given one points array. */
  profileKey(fn: string): object | undefined {
    return this.fns.get(fn);
  }

  has(fn: string): boolean {
    return this.fns.has(fn);
  }

  grid(fn: string): { batches: number[]; smShares: number[]; quotas: number[] } {
    const f = this.fns.get(fn);
    return f ? f.view : { batches: [], smShares: [], quotas: [] };
  }

  latencyMs(fn: string, batch: number, smShare: number, quota: number): number {
    const f = this.fns.get(fn);
    if (!f || !(quota > 0) || !(smShare > 0) || !(batch > 0)) return Infinity;
    const si = f.smIdx.get(Math.round(smShare * 1e3));
    const qi = f.qIdx.get(Math.round(quota * 1e3));
    if (si !== undefined && qi !== undefined && f.smShares[si] === smShare && f.quotas[qi] === quota) {
      const bi = f.batches.indexOf(batch);
      if (bi >= 0) {
        const ns = f.smShares.length;
        const nq = f.quotas.length;
        const d = (f.dense ??= new Float64Array(f.batches.length * ns * nq).fill(NaN));
        const at = (bi * ns + si) * nq + qi;
        let l = d[at];
        if (l !== l) d[at] = l = this.compute(f, batch, smShare, quota);
        return l;
      }
    }
    const key = pack(batch, smShare, quota);
    if (key !== key) return this.compute(f, batch, smShare, quota);
    let l = f.memo.get(key);
    if (l === undefined) {
      l = this.compute(f, batch, smShare, quota);
      if (f.memo.size >= 1 << 16) f.memo.clear();
      f.memo.set(key, l);
    }
    return l;
  }

  /** latencyMs without the memo (exported for the cached-vs-uncached test). */
  latencyMsUncached(fn: string, batch: number, smShare: number, quota: number): number {
    const f = this.fns.get(fn);
    if (!f || !(quota > 0) || !(smShare > 0) || !(batch > 0)) return Infinity;
    return this.compute(f, batch, smShare, quota);
  }

  private compute(f: FnProfile, batch: number, smShare: number, quota: number): number {
    const bs = f.batches;
    const lastB = bs[bs.length - 1];
    if (batch > lastB) return (this.gridLatency(f.grids[bs.length - 1], smShare, quota) * batch) / lastB;
    bracket(bs, batch);
    const i0 = bI0;
    const i1 = bI1;
    const w = bW;
    const l0 = this.gridLatency(f.grids[i0], smShare, quota);
    if (w === 0) return l0;
    return l0 * (1 - w) + this.gridLatency(f.grids[i1], smShare, quota) * w;
  }

  capability(fn: string, batch: number, smShare: number, quota: number): number {
    const l = this.latencyMs(fn, batch, smShare, quota);
    return l < Infinity && l > 0 ? (batch * 1000) / l : 0;
  }

  private gridLatency(g: BatchGrid, smShare: number, quota: number): number {
    const qMin = g.quotas[0];
    if (this.refuseBelow && quota < qMin - 1e-9) return Infinity;
    const scale = quota < qMin ? qMin / quota : 1;
    bracket(g.smShares, smShare);
    const s0 = bI0;
    const s1 = bI1;
    const ws = bW;
    bracket(g.quotas, Math.max(quota, qMin));
    const q0 = bI0;
    const q1 = bI1;
    const wq = bW;
    const n = g.quotas.length;
    // the four corners in a fixed order (no allocation: this is the simulator's and policies' hot path)
    const v0 = g.rate[s0 * n + q0];
    const v1 = g.rate[s0 * n + q1];
    const v2 = g.rate[s1 * n + q0];
    const v3 = g.rate[s1 * n + q1];
    const w0 = (1 - ws) * (1 - wq);
    const w1 = (1 - ws) * wq;
    const w2 = ws * (1 - wq);
    const w3 = ws * wq;
    let r = 0;
    let wsum = 0;
    if (v0 === v0 && w0 > 0) (r += v0 * w0), (wsum += w0);
    if (v1 === v1 && w1 > 0) (r += v1 * w1), (wsum += w1);
    if (v2 === v2 && w2 > 0) (r += v2 * w2), (wsum += w2);
    if (v3 === v3 && w3 > 0) (r += v3 * w3), (wsum += w3);
    if (wsum === 0) {
      // every weighted corner is missing: nearest measured corner, else unknown
      const any = v0 === v0 ? v0 : v1 === v1 ? v1 : v2 === v2 ? v2 : v3 === v3 ? v3 : NaN;
      if (any !== any) return Infinity;
      return (1 / any) * scale;
    }
    return (1 / (r / wsum)) * scale;
  }
}
