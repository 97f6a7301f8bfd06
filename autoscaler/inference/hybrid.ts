import { ClusterOverlay, hasRoom, newReplicaOptions } from './cluster';
import { fmt, noChange, observedRps, parseParams, weightsByCapability } from './common';
import { lazyIn, lazyOut, pushSample } from './lazy';
import { makePredictor, upper } from './predictors';
import { sloRate } from './queueing';
import { Capability, Decision, FunctionSpec, InferencePolicy, Observation, Placement, PolicyDeps, PolicyParams, QuotaChange } from './types';

/**
 * HAS-GPU hybrid vertical/horizontal auto-scaling (Euro-Par'25, Algorithm 1), optionally composed
 * with Dilu's lazy scale-out/in window.
 *
 * Constants the paper leaves open, and where ours come from:
 * - alpha 0.9, beta 0.3, quotaStep 0.1 (ΔI_q), minQuota 0.1, cooldownS 10, maxSmTypes 2 (SM
 *   partition types per GPU), hgoThreshold 0.95: the authors' controller (KontonGu/HAS-GPU
 *   has_autoscaling.go).
 * - Kalman noises 1 / 10: the authors' request_predictor_kalman.go; quantile 0.9: ours.
 * - Scale-down gap ΔR = α·C_f − R, as the authors' code does (the paper's C_f − R would leave the
 *   function at 100 % of its capability, above the α trigger, and oscillate).
 * - SLO awareness (ours; Algorithm 1 sizes by throughput alone and would otherwise pick quotas
 *   whose latency alone breaks the SLO). sloModel 'mdc' (default): a replica's capability is the
 *   rate at which its M/D/1 latency at the SLO percentile stays within the SLO (Faro's estimator,
 *   queueing.ts, with one batch's latency as the service time — conservative: partly filled
 *   dynamic batches make a lightly loaded replica look like an unbatched one), capped by
 *   batch/latency. 'budget': batch/latency if one batch fits
 *   latencyBudget × SLO, else 0. 'none': batch/latency (Algorithm 1 as printed). When nothing in
 *   the profile meets the SLO, the fastest latency +5 % stands in for it.
 */
export const HYBRID_DEFAULTS = {
  alpha: 0.9,
  beta: 0.3,
  quotaStep: 0.1,
  minQuota: 0.1,
  cooldownS: 10,
  maxSmTypes: 2,
  hgoThreshold: 0.95,
  predictor: 'kalman',
  processNoise: 1,
  measurementNoise: 10,
  window: 10,
  quantile: 0.9,
  sloModel: 'mdc',
  /**
   * Percentile the M/D/1 capability model is held to (0: the spec's sloPercentile). Ours: 95, because
   * the halved M/M/c tail is pessimistic at p99 (simulated p99 violations stay low at 95).
   */
  mdcPercentile: 95,
  latencyBudget: 0.5,
  rMin: 0,
  maxNewPerTick: 64,
  lazy: false,
  lazyWindowS: 40,
  phiOut: 20,
  phiIn: 30,
};
export type HybridParams = typeof HYBRID_DEFAULTS;

export interface HybridState {
  pred: unknown;
  /** ms of the last scale-down, null if none. */
  lastScaleDownMs: number | null;
  /** Lazy window of observed RPS samples. */
  samples: number[];
}

interface Pod {
  id: string;
  gpu: string;
  smShare: number;
  quota: number;
  batchSize: number;
  ready: boolean;
}

interface Config {
  smShare: number;
  quota: number;
  batchSize: number;
  cap: number;
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
const EPS = 1e-9;
const configCache = new WeakMap<Capability, Map<string, Config[]>>();

export function hybrid(params: PolicyParams, deps: PolicyDeps): InferencePolicy<HybridState> {
  const p = parseParams('hybrid', HYBRID_DEFAULTS, params);
  if (!(p.alpha > 0 && p.beta >= 0 && p.beta < p.alpha)) throw new Error(`hybrid: need 0 ≤ beta < alpha, got alpha=${p.alpha} beta=${p.beta}`);
  if (!(p.quotaStep > 0 && p.quotaStep <= 1)) throw new Error(`hybrid: quotaStep must be in (0, 1], got ${p.quotaStep}`);
  if (!(p.quantile > 0 && p.quantile < 1)) throw new Error(`hybrid: quantile must be in (0, 1), got ${p.quantile}`);
  const predictor = makePredictor(p.predictor, { processNoise: p.processNoise, measurementNoise: p.measurementNoise, window: p.window });
  const cap = deps.capability;
  const lazyP = { windowS: p.lazyWindowS, phiOut: p.phiOut, phiIn: p.phiIn };
  const quotaLevels: number[] = [];
  for (let q = p.minQuota; q <= 1 + EPS; q += p.quotaStep) quotaLevels.push(r6(q));

  if (!['mdc', 'budget', 'none'].includes(p.sloModel)) throw new Error(`hybrid: sloModel must be mdc, budget or none, got ${p.sloModel}`);
  let sloPct = 0.99;
  /** The SLO the capability is held to (ms): the spec's, or the fastest latency +5 % if that is unreachable. */
  const budgetOf = (spec: FunctionSpec) => {
    sloPct = Math.min(0.9999, Math.max(0.5, (p.mdcPercentile > 0 ? p.mdcPercentile : spec.sloPercentile) / 100));
    const g = cap.grid(spec.name);
    const fastest = g.batches.length ? cap.latencyMs(spec.name, g.batches[0], 1, 1) : Infinity;
    const slo = p.sloModel === 'budget' ? spec.sloLatencyMs * p.latencyBudget : spec.sloLatencyMs;
    return Math.max(slo, fastest * 1.05);
  };
  /** capOf memo: per (function, SLO) a map keyed by batch, SM share and quota packed in a number. */
  const memo = new Map<string, Map<number, number>>();
  let cur: Map<number, number> = new Map();
  const useMemo = (fn: string, budget: number) => {
    const k = `${fn}|${budget}|${sloPct}`;
    let m = memo.get(k);
    if (!m) {
      if (memo.size > 100000) memo.clear();
      memo.set(k, (m = new Map()));
    }
    cur = m;
  };
  const rateMemo = new Map<string, number>();
  const sloRateOf = (l: number, budget: number): number => {
    const key = `${l}|${budget}|${sloPct}`;
    let r = rateMemo.get(key);
    if (r === undefined) {
      r = sloRate(sloPct, l, 1, budget);
      if (rateMemo.size > 200000) rateMemo.clear();
      rateMemo.set(key, r);
    }
    return r;
  };
  const capOf = (fn: string, budget: number, b: number, s: number, q: number): number => {
    if (p.sloModel === 'none') return cap.capability(fn, b, s, q);
    const key = b * 1e8 + Math.round(s * 1e4) * 1e4 + Math.round(q * 1e4);
    let c = cur.get(key);
    if (c === undefined) {
      const l = cap.latencyMs(fn, b, s, q);
      c = l > budget ? 0 : p.sloModel === 'budget' ? cap.capability(fn, b, s, q) : Math.min((b * 1000) / l, sloRateOf(l, budget));
      cur.set(key, c);
    }
    return c;
  };

  /** The profiled batch ≤ maxBatchSize with the most SLO capability (the smallest on ties). */
  const bestBatch = (spec: FunctionSpec, budget: number, s: number, q: number): number => {
    let best = 1;
    let bc = -1;
    for (const b of cap.grid(spec.name).batches) {
      if (b > Math.max(1, spec.maxBatchSize)) break;
      const c = capOf(spec.name, budget, b, s, q);
      if (c > bc + EPS) {
        best = b;
        bc = c;
      }
    }
    return best;
  };

  /** Every (s, q) on the profile's SM grid and our quota levels, with its best feasible batch. */
  const configs = (spec: FunctionSpec, budget: number): Config[] => {
    let m = configCache.get(cap);
    if (!m) configCache.set(cap, (m = new Map()));
    const key = `${spec.name}|${budget}|${spec.maxBatchSize}|${p.quotaStep}|${p.minQuota}`;
    let list = m.get(key);
    if (!list) {
      list = [];
      for (const s of cap.grid(spec.name).smShares)
        for (const q of quotaLevels) {
          const b = bestBatch(spec, budget, s, q);
          list.push({ smShare: s, quota: q, batchSize: b, cap: capOf(spec.name, budget, b, s, q) });
        }
      m.set(key, list);
    }
    return list;
  };

  const byCost = new WeakMap<Config[], { cheap: Config[]; strongest?: Config }>();
  /** RaPPbyThroughput(f, ΔR): the cheapest (s·q) configuration covering ΔR, else the most capable. */
  const efficient = (spec: FunctionSpec, budget: number, dR: number): Config | undefined => {
    const all = configs(spec, budget);
    let t = byCost.get(all);
    if (!t) {
      const cheap = all.filter((c) => c.cap > 0).sort((x, y) => x.smShare * x.quota - y.smShare * y.quota || y.cap - x.cap);
      t = { cheap, strongest: cheap.reduce<Config | undefined>((m, c) => (!m || c.cap > m.cap ? c : m), undefined) };
      byCost.set(all, t);
    }
    for (const c of t.cheap) if (c.cap >= dR) return c;
    return t.strongest;
  };

  return {
    name: 'hybrid',
    initialState: () => ({ pred: predictor.init(), lastScaleDownMs: null, samples: [] }),
    decide(spec, state, obs, now) {
      const fn = spec.name;
      const rps = observedRps(obs);
      const pred = predictor.observe(state.pred, rps);
      const R = Math.max(upper(predictor.forecast(pred), p.quantile), p.rMin);
      const budget = budgetOf(spec);
      useMemo(fn, budget);
      const overlay = new ClusterOverlay(obs.cluster);
      const pods: Pod[] = obs.replicas.map((r) => ({ id: r.id, gpu: r.gpu, smShare: r.smShare, quota: r.quota, batchSize: r.batchSize, ready: r.ready }));
      const podCap = (x: Pod, q = x.quota) => capOf(fn, budget, x.batchSize, x.smShare, q);
      let Cf = 0;
      for (const x of pods) Cf += podCap(x);
      const quotas = new Map<string, number>();
      const add: Placement[] = [];
      const remove: string[] = [];
      const notes: string[] = [];
      const floor = Math.max(1, spec.minScale);

      // Horizontal placement of one new replica for a gap dR (Algorithm 1 lines 14-25).
      const smGrid = cap.grid(fn).smShares;
      const addOne = (dR: number): number => {
        let target: { gpu: string; cfg: Config } | undefined;
        const minSm = smGrid[0] ?? 1;
        const bg = overlay.lowestOccupancy(p.hgoThreshold, (g) => hasRoom(g, p.maxSmTypes, minSm, p.minQuota));
        if (bg) {
          let cmax: Config | undefined;
          for (const o of newReplicaOptions(bg, p.maxSmTypes, smGrid, p.minQuota)) {
            const qmax = r6(Math.floor((o.maxQuota + EPS) / p.quotaStep) * p.quotaStep);
            if (qmax < p.minQuota - EPS) continue;
            const b = bestBatch(spec, budget, o.smShare, qmax);
            const c = capOf(fn, budget, b, o.smShare, qmax);
            if (!cmax || c > cmax.cap) cmax = { smShare: o.smShare, quota: qmax, batchSize: b, cap: c };
          }
          if (cmax && cmax.cap > dR) {
            // the smallest quota step that covers dR
            for (const q of quotaLevels) {
              if (q > cmax.quota + EPS) break;
              const c = capOf(fn, budget, cmax.batchSize, cmax.smShare, q);
              if (c >= dR) {
                target = { gpu: bg.id, cfg: { ...cmax, quota: q, cap: c } };
                break;
              }
            }
          } else if (cmax && cmax.cap > 0 && !overlay.base.canAddGpu) target = { gpu: bg.id, cfg: cmax };
        }
        if (!target && overlay.base.canAddGpu) {
          const cfg = efficient(spec, budget, dR);
          if (cfg) target = { gpu: overlay.newGpuId(), cfg };
        }
        if (!target) return 0;
        overlay.place(`new-${add.length}`, fn, target.gpu, target.cfg.smShare, target.cfg.quota);
        add.push({ gpu: target.gpu, smShare: target.cfg.smShare, quota: target.cfg.quota, batchSize: target.cfg.batchSize });
        notes.push(`+replica on ${target.gpu} (s=${target.cfg.smShare}, q=${target.cfg.quota}, b=${target.cfg.batchSize})`);
        return target.cfg.cap;
      };

      // R_min / min_scale: at least one replica, always.
      while (pods.length + add.length < floor) {
        const c = addOne(Math.max(R / p.alpha - Cf, 0));
        if (c <= 0 && add.length + pods.length < floor && !overlay.base.canAddGpu) break;
        Cf += c;
      }

      let nextDown = state.lastScaleDownMs;
      if (R > p.alpha * Cf) {
        let dR = R - p.alpha * Cf;
        // vertical first: more SMs first, quota up in steps of ΔI_q within the slot's free quota
        const order = [...pods].sort((a, b) => b.smShare - a.smShare);
        for (const x of order) {
          if (dR <= 0) break;
          const aq = overlay.maxQuotaFor(x.id, x.gpu);
          const base = podCap(x);
          let newQ = x.quota;
          let dC = 0;
          for (let n = 1; r6(x.quota + n * p.quotaStep) <= aq + EPS && dR - dC > 0; n++) {
            newQ = r6(x.quota + n * p.quotaStep);
            dC = podCap(x, newQ) - base;
          }
          if (newQ !== x.quota) {
            notes.push(`quota ${x.id} ${x.quota}→${newQ}`);
            overlay.setQuota(x.id, x.gpu, newQ);
            x.quota = newQ;
            quotas.set(x.id, newQ);
            dR -= dC;
          }
        }
        // then horizontal: used GPU with the lowest HGO, else a new GPU
        while (dR > 0 && pods.length + add.length < spec.maxScale && add.length < p.maxNewPerTick) {
          const c = addOne(dR);
          if (c <= 0) {
            notes.push('no capacity for another replica');
            break;
          }
          dR -= c;
        }
      } else if (R < p.beta * Cf && (state.lastScaleDownMs === null || now - state.lastScaleDownMs >= p.cooldownS * 1000)) {
        let dR = p.alpha * Cf - R;
        let left = pods.length;
        let capLeft = Cf;
        const order = [...pods].sort((a, b) => a.smShare - b.smShare || Number(a.ready) - Number(b.ready) || a.quota - b.quota);
        for (const x of order) {
          if (dR <= 0) break;
          const before = x.quota;
          for (;;) {
            const c = podCap(x);
            const nq = r6(x.quota - p.quotaStep);
            const dc = nq < p.minQuota - EPS ? c : c - podCap(x, nq);
            if (dc >= c - EPS) {
              // the next step would leave nothing: remove the replica (horizontal scale-down)
              if (c <= dR && left > floor && capLeft - c >= p.rMin) {
                remove.push(x.id);
                overlay.remove(x.id, x.gpu);
                left--;
                capLeft -= c;
                dR -= c;
                notes.push(`-replica ${x.id}`);
              }
              break;
            }
            if (dc > dR || capLeft - dc < p.rMin) break;
            x.quota = nq;
            dR -= dc;
            capLeft -= dc;
          }
          if (x.quota !== before && !remove.includes(x.id)) {
            quotas.set(x.id, x.quota);
            overlay.setQuota(x.id, x.gpu, x.quota);
            notes.push(`quota ${x.id} ${before}→${x.quota}`);
          }
        }
        if (quotas.size > 0 || remove.length > 0) nextDown = now;
      }

      // Dilu lazy window composes with the above: it gates adding and removing replicas only.
      let samples = state.samples;
      if (p.lazy) {
        samples = pushSample(samples, rps, lazyP, obs.intervalMs / 1000);
        const ceiling = (xs: Pod[]) => xs.reduce((a, x) => a + podCap(x, Math.max(x.quota, obs.cluster.gpus.length ? overlay.maxQuotaFor(x.id, x.gpu) : 1)), 0);
        const needed = Math.max(0, floor - pods.length);
        if (add.length > needed) {
          if (lazyOut(samples, ceiling(pods), lazyP)) samples = [];
          else {
            notes.push(`lazy: scale-out waits (${add.length - needed} replica(s))`);
            add.splice(needed);
          }
        }
        if (remove.length > 0) {
          const kept = pods.filter((x) => !remove.includes(x.id));
          const smallest = [...pods].sort((a, b) => podCap(a) - podCap(b))[0];
          const oneLess = pods.filter((x) => x !== smallest);
          if (lazyIn(samples, ceiling(oneLess), lazyP)) samples = [];
          else {
            notes.push(`lazy: scale-in waits (${remove.length} replica(s))`);
            remove.splice(0);
            void kept;
          }
        }
      }

      const quotaList: QuotaChange[] = [...quotas].filter(([id]) => !remove.includes(id)).map(([replicaId, quota]) => ({ replicaId, quota }));
      const kept = pods.filter((x) => !remove.includes(x.id));
      const head = `hybrid: R=${fmt(R)} req/s (${predictor.name} q${p.quantile}, observed ${fmt(rps)}), C=${fmt(Cf)} req/s, budget ${fmt(budget)} ms`;
      if (quotaList.length === 0 && add.length === 0 && remove.length === 0) {
        const d = noChange(spec, obs, cap, notes.length ? `${head}; ${notes.join('; ')}` : `${head}; within [${p.beta}, ${p.alpha}]·C`);
        return { decision: d, nextState: { pred, lastScaleDownMs: nextDown, samples }, reason: d.reason };
      }
      const decision: Decision = {
        replicas: kept.length + add.length,
        quotas: quotaList,
        add,
        remove,
        weights: weightsByCapability(cap, fn, kept),
        reason: `${head}; ${notes.join('; ')}`,
      };
      return { decision, nextState: { pred, lastScaleDownMs: nextDown, samples }, reason: decision.reason };
    },
  };
}

export type { Observation };
