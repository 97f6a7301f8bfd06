/** The hybrid policy's capability tables per (profile, SLO): latency, capacity, best batch, configurations; memoised (p.cache). */
import { pack } from '../rapp/profile-capability';
import { sloRate } from './queueing';
import { Config, EPS, HybridParams } from './hybrid-params';
import type { Capability, ScalingSpec } from './types';

/**
 * Caches (p.cache, default on). Everything below is a pure function of the capability's latency
 * surface for the function, the SLO (ms, percentile) and maxBatchSize, so it is kept per
 * (capability.profileKey(fn), SLO, percentile, maxBatch): a re-profile (new key) starts afresh, and
 * functions sharing one profile and SLO share one table. A capability without profileKey is cached
 * per function name (never invalidated). With cache off, every value is computed afresh and the
 * new-GPU choice sorts the whole configuration table, as Algorithm 1's RaPPbyThroughput reads —
 * the reference the cached path is tested against (test/autoscaler/hybrid.test.ts).
 */
export interface Shared {
  capMemo: Map<number, number>;
  /** sloModel 'shared': worst batch latency ≤ b per pack(b, s, q). */
  latMemo: Map<number, number>;
  rate1Memo: Map<number, number>;
  batchMemo: Map<number, number>;
  /**
   * Dense memos for points on the table's grid (batch in `batches`, s in the SM grid, q a quota
   * level): capability [b][s][q] (NaN: not yet) and best batch [s][q] (0: not yet). The maps
   * above hold everything else.
   */
  capDense: Float64Array;
  /** worstLatency [b][s][q] and rate1 [s][q] on the same grid (NaN: not yet). */
  latDense: Float64Array;
  rate1Dense: Float64Array;
  batchDense: Float64Array;
  smIndex: Map<number, number>;
  /** Configuration table in (SM grid × quota levels) order, filled lazily. */
  cfgs: Array<Config | undefined>;
  /** RaPPbyThroughput over cost groups walked so far: each group's best and the running max cap. */
  gbest: Array<Config | undefined>;
  pre: number[];
  walked: number;
}

/**
 * One function's entry to the capability tables: its spec, the SLO they hold it to (budget,
 * percentile), its batch and SM grids, and the tables it shares with functions of the same profile
 * and SLO (`shared`). What the SLO model's `capOf`/`capacity` read; `ctxOf` builds it.
 */
export interface CapabilityTables {
  fn: string;
  spec: ScalingSpec;
  /** SLO the capability is held to, ms. */
  budget: number;
  /** Percentile (0..1) the M/D/1 model is held to. */
  pct: number;
  /** Profiled batches ≤ maxBatchSize (at least the smallest). */
  batches: number[];
  smGrid: number[];
  shared?: Shared;
}

export interface Entry {
  token: object | undefined;
  slo: number;
  pctIn: number;
  maxB: number;
  ctx: CapabilityTables;
}

export function makeTables(p: HybridParams, cap: Capability, quotaLevels: number[], shared: boolean) {
  const byToken = new WeakMap<object, Map<string, Shared>>();
  const byName = new Map<string, Shared>();
  const entries = new Map<string, Entry>();
  const pctOf = (spec: ScalingSpec) => Math.min(0.9999, Math.max(0.5, (p.mdcPercentile > 0 && !shared ? p.mdcPercentile : spec.sloPercentile) / 100));

  /** The function's context: SLO budget (the spec's, or the fastest latency +5 % if that is unreachable), grids, caches. */
  const buildCtx = (spec: ScalingSpec): CapabilityTables => {
    const g = cap.grid(spec.name);
    const fastest = g.batches.length ? cap.latencyMs(spec.name, g.batches[0], 1, 1) : Infinity;
    const slo = p.sloModel === 'budget' ? spec.sloLatencyMs * p.latencyBudget : spec.sloLatencyMs;
    const budget = Math.max(slo, fastest * 1.05);
    const pct = pctOf(spec);
    const maxB = Math.max(1, spec.maxBatchSize);
    return { fn: spec.name, spec, budget, pct, batches: g.batches.filter((b) => b <= maxB), smGrid: g.smShares };
  };
  const ctxOf = (spec: ScalingSpec): CapabilityTables => {
    if (!p.cache) return buildCtx(spec);
    const token = cap.profileKey?.(spec.name);
    const e = entries.get(spec.name);
    if (e && e.token === token && e.slo === spec.sloLatencyMs && e.pctIn === spec.sloPercentile && e.maxB === spec.maxBatchSize &&
      (token !== undefined || cap.grid(spec.name).smShares === e.ctx.smGrid)) {
      e.ctx.spec = spec;
      return e.ctx;
    }
    const ctx = buildCtx(spec);
    const key = `${ctx.budget}|${ctx.pct}|${spec.maxBatchSize}`;
    let m: Map<string, Shared>;
    if (token) {
      let t = byToken.get(token);
      if (!t) byToken.set(token, (t = new Map()));
      m = t;
    } else m = byName;
    const k = token ? key : `${spec.name}|${key}`;
    let sh = m.get(k);
    const fresh = !sh;
    if (!sh) {
      if (m.size > 100000) m.clear();
      const nq = quotaLevels.length;
      const smIndex = new Map<number, number>();
      ctx.smGrid.forEach((v, i) => smIndex.set(Math.round(v * 1e3), i));
      m.set(k, (sh = { capMemo: new Map(), latMemo: new Map(), rate1Memo: new Map(), batchMemo: new Map(),
        capDense: new Float64Array(Math.max(1, ctx.batches.length) * ctx.smGrid.length * nq).fill(NaN),
        latDense: new Float64Array(Math.max(1, ctx.batches.length) * ctx.smGrid.length * nq).fill(NaN),
        rate1Dense: new Float64Array(ctx.smGrid.length * nq).fill(NaN), batchDense: new Float64Array(ctx.smGrid.length * nq),
        smIndex, cfgs: [], gbest: [], pre: [], walked: 0 }));
    }
    ctx.shared = sh;
    if (fresh) fill(ctx);
    if (entries.size > 200000) entries.clear();
    entries.set(spec.name, { token, slo: spec.sloLatencyMs, pctIn: spec.sloPercentile, maxB: spec.maxBatchSize, ctx });
    return ctx;
  };

  /**
   * Computes a new table's whole grid (capability, worst latency, rate with batches of one, best
   * batch) when it is made — in the first decision after a profile is loaded or an SLO changes — so
   * later decisions only read dense arrays (600 points for 3 batches × 20 SM shares × 10 quotas).
   */
  const fill = (x: CapabilityTables): void => {
    for (const s of x.smGrid)
      for (const q of quotaLevels) {
        for (const b of x.batches) capOf(x, b, s, q);
        if (shared) rate1(x, s, q);
        bestBatch(x, s, q);
      }
  };
  /**
   * The slowest batch a replica of batch b may run at (s, q), ms: profiled batches are noisy (a
   * batch of 2 can be faster than one of 1), and a lightly loaded replica runs partial batches.
   */
  const worstLatency = (x: CapabilityTables, b: number, s: number, q: number): number => {
    const sh = x.shared;
    const gi = sh ? gridIndex(sh, x, s, q) : -1;
    const bi = gi < 0 ? -1 : x.batches.indexOf(b);
    if (bi >= 0) {
      const at = bi * x.smGrid.length * quotaLevels.length + gi;
      let v = sh!.latDense[at];
      if (v !== v) sh!.latDense[at] = v = computeWorst(x, b, s, q);
      return v;
    }
    const key = sh ? pack(b, s, q) : NaN;
    if (sh && key === key) {
      const v = sh.latMemo.get(key);
      if (v !== undefined) return v;
    }
    const l = computeWorst(x, b, s, q);
    if (sh && key === key) {
      if (sh.latMemo.size >= 1 << 16) sh.latMemo.clear();
      sh.latMemo.set(key, l);
    }
    return l;
  };
  const computeWorst = (x: CapabilityTables, b: number, s: number, q: number): number => {
    let l = cap.latencyMs(x.fn, b, s, q);
    for (const k of x.batches) if (k < b) l = Math.max(l, cap.latencyMs(x.fn, k, s, q));
    return l;
  };
  /** A replica's SLO capability, req/s (see the class comment for the models). */
  const computeCap = (x: CapabilityTables, b: number, s: number, q: number): number => {
    if (p.sloModel === 'none') return cap.capability(x.fn, b, s, q);
    const l = cap.latencyMs(x.fn, b, s, q);
    // shared: a replica's full-batch rate if every batch it may run (≤ b) fits the SLO; the queue is the fleet's (fleetOf)
    if (shared) return !(l > 0) || worstLatency(x, b, s, q) > x.budget ? 0 : (b * 1000) / l;
    return l > x.budget ? 0 : p.sloModel === 'budget' ? cap.capability(x.fn, b, s, q) : Math.min((b * 1000) / l, sloRate(x.pct, l, 1, x.budget));
  };
  /** Index of (s, q) in the dense grid (SM index × quota levels + quota index), or -1 off the grid. */
  const q0 = quotaLevels[0];
  const gridIndex = (sh: Shared, x: CapabilityTables, s: number, q: number): number => {
    const si = sh.smIndex.get(Math.round(s * 1e3));
    if (si === undefined || x.smGrid[si] !== s) return -1;
    const qi = Math.round((q - q0) / p.quotaStep);
    if (qi < 0 || qi >= quotaLevels.length || quotaLevels[qi] !== q) return -1;
    return si * quotaLevels.length + qi;
  };
  const capOf = (x: CapabilityTables, b: number, s: number, q: number): number => {
    const sh = x.shared;
    if (!sh) return computeCap(x, b, s, q);
    const gi = gridIndex(sh, x, s, q);
    const bi = gi < 0 ? -1 : x.batches.indexOf(b);
    if (bi >= 0) {
      const at = bi * x.smGrid.length * quotaLevels.length + gi;
      let c = sh.capDense[at];
      if (c !== c) sh.capDense[at] = c = computeCap(x, b, s, q);
      return c;
    }
    const key = pack(b, s, q);
    if (key !== key) return computeCap(x, b, s, q);
    let c = sh.capMemo.get(key);
    if (c === undefined) {
      c = computeCap(x, b, s, q);
      if (sh.capMemo.size >= 1 << 16) sh.capMemo.clear();
      sh.capMemo.set(key, c);
    }
    return c;
  };

  /** A replica's rate with batches of one (what a lightly loaded replica runs), req/s. */
  const rate1 = (x: CapabilityTables, s: number, q: number): number => {
    const b = x.batches[0] ?? 1;
    const sh = x.shared;
    const gi = sh ? gridIndex(sh, x, s, q) : -1;
    if (gi >= 0) {
      let v = sh!.rate1Dense[gi];
      if (v !== v) sh!.rate1Dense[gi] = v = (1000 * b) / cap.latencyMs(x.fn, b, s, q);
      return v;
    }
    const key = sh ? pack(b, s, q) : NaN;
    let r = sh && key === key ? sh.rate1Memo.get(key) : undefined;
    if (r === undefined) {
      r = (1000 * b) / cap.latencyMs(x.fn, b, s, q);
      if (sh && key === key) {
        if (sh.rate1Memo.size >= 1 << 16) sh.rate1Memo.clear();
        sh.rate1Memo.set(key, r);
      }
    }
    return r;
  };
  /** The profiled batch ≤ maxBatchSize with the most SLO capability (the smallest on ties). */
  const computeBest = (x: CapabilityTables, s: number, q: number): number => {
    let best = 1;
    let bc = -1;
    for (const b of x.batches) {
      const c = capOf(x, b, s, q);
      if (c > bc + EPS) {
        best = b;
        bc = c;
      }
    }
    return best;
  };
  const bestBatch = (x: CapabilityTables, s: number, q: number): number => {
    const sh = x.shared;
    if (!sh) return computeBest(x, s, q);
    const gi = gridIndex(sh, x, s, q);
    if (gi >= 0) {
      let b = sh.batchDense[gi];
      if (b === 0) sh.batchDense[gi] = b = computeBest(x, s, q);
      return b;
    }
    const key = pack(0, s, q);
    if (key !== key) return computeBest(x, s, q);
    let b = sh.batchMemo.get(key);
    if (b === undefined) {
      b = computeBest(x, s, q);
      if (sh.batchMemo.size >= 1 << 16) sh.batchMemo.clear();
      sh.batchMemo.set(key, b);
    }
    return b;
  };

  /** Configuration i of the table: SM grid index ⌊i / |quota levels|⌋, quota level i mod |levels|. */
  const cfgAt = (x: CapabilityTables, i: number): Config => {
    const sh = x.shared;
    let c = sh?.cfgs[i];
    if (!c) {
      const s = x.smGrid[Math.floor(i / quotaLevels.length)];
      const q = quotaLevels[i % quotaLevels.length];
      const b = bestBatch(x, s, q);
      c = { smShare: s, quota: q, batchSize: b, cap: capOf(x, b, s, q) };
      if (sh) sh.cfgs[i] = c;
    }
    return c;
  };

  /** Table indexes grouped by equal cost s·q, groups in ascending cost, indexes ascending; per SM grid. */
  const costGroups = new WeakMap<number[], number[][]>();
  const groupsOf = (smGrid: number[]): number[][] => {
    let gs = costGroups.get(smGrid);
    if (!gs) {
      const idx: Array<[number, number]> = [];
      for (let si = 0; si < smGrid.length; si++) for (let qi = 0; qi < quotaLevels.length; qi++) {
        idx.push([smGrid[si] * quotaLevels[qi], si * quotaLevels.length + qi]);
      }
      idx.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      gs = [];
      for (let k = 0; k < idx.length; k++) {
        if (k === 0 || idx[k][0] !== idx[k - 1][0]) gs.push([]);
        gs[gs.length - 1].push(idx[k][1]);
      }
      costGroups.set(smGrid, gs);
    }
    return gs;
  };

  /**
   * RaPPbyThroughput(f, ΔR): the cheapest (s·q) configuration covering ΔR (the most capable on equal
   * cost), else the most capable overall. Cached path: walks cost groups in order and stops at the
   * first that covers, so only the cheap end of the table is ever computed for most functions.
   */
  const efficient = (x: CapabilityTables, dR: number): Config | undefined => {
    const n = x.smGrid.length * quotaLevels.length;
    if (!x.shared) {
      const all: Config[] = [];
      for (let i = 0; i < n; i++) all.push(cfgAt(x, i));
      const cheap = all.filter((c) => c.cap > 0).sort((a, b) => a.smShare * a.quota - b.smShare * b.quota || b.cap - a.cap);
      for (const c of cheap) if (c.cap >= dR) return c;
      return cheap.reduce<Config | undefined>((m, c) => (!m || c.cap > m.cap ? c : m), undefined);
    }
    // Group g's best (most capable, first on ties) and the running maximum of those caps up to g:
    // the first group whose best covers dR is the first g with pre[g] ≥ dR (pre is nondecreasing).
    const sh = x.shared;
    const groups = groupsOf(x.smGrid);
    const find = (): number => {
      let lo = 0;
      let hi = sh.walked;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (sh.pre[mid] >= dR) hi = mid;
        else lo = mid + 1;
      }
      return lo;
    };
    let k = find();
    if (k < sh.walked) return sh.gbest[k];
    while (sh.walked < groups.length) {
      let gbest: Config | undefined;
      for (const i of groups[sh.walked]) {
        const c = cfgAt(x, i);
        if (c.cap > 0 && (!gbest || c.cap > gbest.cap)) gbest = c;
      }
      const prev = sh.walked > 0 ? sh.pre[sh.walked - 1] : -Infinity;
      sh.gbest.push(gbest);
      sh.pre.push(gbest && gbest.cap > prev ? gbest.cap : prev);
      sh.walked++;
      if (gbest && gbest.cap >= dR) return gbest;
    }
    // nothing covers dR: the most capable, the first group that reached the maximum
    const top = sh.walked > 0 ? sh.pre[sh.walked - 1] : -Infinity;
    if (top === -Infinity) return undefined;
    for (k = 0; sh.pre[k] !== top; k++);
    return sh.gbest[k];
  };

  return { byToken, byName, entries, pctOf, buildCtx, ctxOf, worstLatency, computeWorst, computeCap, q0, gridIndex, capOf, rate1, computeBest, bestBatch, cfgAt,
    costGroups, groupsOf, efficient };
}

export type Tables = ReturnType<typeof makeTables>;
