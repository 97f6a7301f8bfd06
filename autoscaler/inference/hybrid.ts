import { ClusterOverlay, hasRoom, newReplicaOptions } from './cluster';
import { fmt, noChange, observedRps, parseParams, weightsByCapability } from './common';
import { idleLongEnough, idleSince } from './idle';
import { lazyIn, lazyOut, pushSample } from './lazy';
import { makePredictor, upper } from './predictors';
import { Decision, FunctionSpec, InferencePolicy, Observation, Placement, PolicyDeps, PolicyParams, QuotaChange } from './types';
import { Config, EPS, HYBRID_DEFAULTS, HybridState, Pod, r6, trendSlope } from './hybrid-params';
import { Cand, CandList, makeFleet, Member } from './hybrid-fleet';
import { Ctx, makeTables } from './hybrid-tables';
export { HYBRID_DEFAULTS, trendSlope } from './hybrid-params';
export type { HybridParams, HybridState } from './hybrid-params';

/** One decision's working set, passed to the placement helpers (defined once per policy, not per decision). */
interface Step {
  fn: string;
  spec: FunctionSpec;
  ctx: Ctx;
  overlay: ClusterOverlay;
  pods: Pod[];
  /** sloModel 'shared': the fleet being sized (pods and the replicas added so far). */
  fleet: Member[];
  add: Placement[];
  notes: string[];
}

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

  if (!['cheapest', 'smax'].includes(p.usedGpuConfig)) throw new Error(`hybrid: usedGpuConfig must be cheapest or smax, got ${p.usedGpuConfig}`);
  if (!['mdc', 'shared', 'budget', 'none'].includes(p.sloModel)) throw new Error(`hybrid: sloModel must be mdc, shared, budget or none, got ${p.sloModel}`);
  const shared = p.sloModel === 'shared';
  if (!(p.downUtil > p.beta && p.downUtil <= p.alpha)) throw new Error(`hybrid: downUtil must be in (beta, alpha], got ${p.downUtil}`);
  const leadS = p.leadS >= 0 ? p.leadS : Math.max(0, deps.coldStartS ?? 0);

  const tables = makeTables(p, cap, quotaLevels, shared);
  const { ctxOf, capOf, bestBatch, efficient } = tables;
  const { fleetOf, fits, fleetCap, candidatesOf, onGpuCandidates, cheapestCover } = makeFleet(p, cap, quotaLevels, shared, tables);
  /** A replica's capability at quota q (its own by default). */
  const podCap = (ctx: Ctx, x: Pod, q = x.quota): number => capOf(ctx, x.batchSize, x.smShare, q);
  // Horizontal placement of one new replica for a gap dR (Algorithm 1 lines 14-25).
  const addOne = (st: Step, dR: number): number => {
    const { ctx, overlay, add, notes, fn } = st;
    const smGrid = ctx.smGrid;
    let target: { gpu: string; cfg: Config } | undefined;
    const minSm = smGrid[0] ?? 1;
    const bg = overlay.lowestOccupancy(p.hgoThreshold, (g) => hasRoom(g, p.maxSmTypes, minSm, p.minQuota));
    if (bg) {
      let cmax: Config | undefined;
      for (const o of newReplicaOptions(bg, p.maxSmTypes, smGrid, p.minQuota)) {
        const qmax = r6(Math.floor((o.maxQuota + EPS) / p.quotaStep) * p.quotaStep);
        if (qmax < p.minQuota - EPS) continue;
        const b = bestBatch(ctx, o.smShare, qmax);
        const c = capOf(ctx, b, o.smShare, qmax);
        if (!cmax || c > cmax.cap) cmax = { smShare: o.smShare, quota: qmax, batchSize: b, cap: c };
      }
      if (cmax && cmax.cap > dR && p.usedGpuConfig === 'cheapest') {
        // the cheapest (s·q) option on this GPU that covers dR, the most capable on equal cost
        let best: Config | undefined;
        let bestCost = Infinity;
        for (const o of newReplicaOptions(bg, p.maxSmTypes, smGrid, p.minQuota)) {
          for (const q of quotaLevels) {
            if (q > o.maxQuota + EPS) break;
            const cost = o.smShare * q;
            if (cost > bestCost + EPS) break;
            const b = bestBatch(ctx, o.smShare, q);
            const c = capOf(ctx, b, o.smShare, q);
            if (c >= dR && (cost < bestCost - EPS || (best && c > best.cap))) {
              best = { smShare: o.smShare, quota: q, batchSize: b, cap: c };
              bestCost = cost;
            }
          }
        }
        if (best) target = { gpu: bg.id, cfg: best };
      } else if (cmax && cmax.cap > dR) {
        // the smallest quota step that covers dR
        for (const q of quotaLevels) {
          if (q > cmax.quota + EPS) break;
          const c = capOf(ctx, cmax.batchSize, cmax.smShare, q);
          if (c >= dR) {
            target = { gpu: bg.id, cfg: { ...cmax, quota: q, cap: c } };
            break;
          }
        }
      } else if (cmax && cmax.cap > 0 && !overlay.base.canAddGpu) target = { gpu: bg.id, cfg: cmax };
    }
    if (!target && overlay.base.canAddGpu) {
      const cfg = efficient(ctx, dR);
      if (cfg) target = { gpu: overlay.newGpuId(), cfg };
    }
    if (!target) return 0;
    overlay.place(`new-${add.length}`, fn, target.gpu, target.cfg.smShare, target.cfg.quota);
    add.push({ gpu: target.gpu, smShare: target.cfg.smShare, quota: target.cfg.quota, batchSize: target.cfg.batchSize });
    notes.push(`+replica on ${target.gpu} (s=${target.cfg.smShare}, q=${target.cfg.quota}, b=${target.cfg.batchSize})`);
    return target.cfg.cap;
  };

  // sloModel 'shared': one new replica, the cheapest that helps the shared queue fit T
  const placeShared = (st: Step, T: number): boolean => {
    const { ctx, overlay, add, notes, fn, spec, pods, fleet } = st;
    const smGrid = ctx.smGrid;
    const f = fleetOf(ctx, fleet);
    const mMax = Math.max(1, Math.min(spec.maxScale - pods.length - add.length, p.maxNewPerTick - add.length));
    let target: { gpu: string; cfg: Cand } | undefined;
    const minSm = smGrid[0] ?? 1;
    const bg = overlay.lowestOccupancy(p.hgoThreshold, (g) => hasRoom(g, p.maxSmTypes, minSm, p.minQuota));
    let onBg: CandList | undefined;
    if (bg) {
      onBg = onGpuCandidates(ctx, newReplicaOptions(bg, p.maxSmTypes, smGrid, p.minQuota));
      // a used GPU when one replica there is enough (Algorithm 1 lines 15-22): the cheapest such
      const one = cheapestCover(ctx, f, T, 1, onBg);
      if (one && fits(ctx, { n: f.n + 1, mu: f.mu + one.cap, mu1: f.mu1 + one.cap1, lmax: Math.max(f.lmax, one.lat) }, T)) target = { gpu: bg.id, cfg: one };
    }
    if (!target && overlay.base.canAddGpu) {
      const cfg = cheapestCover(ctx, f, T, mMax, candidatesOf(ctx));
      if (cfg) target = { gpu: overlay.newGpuId(), cfg };
    }
    if (!target && bg && onBg) {
      const cfg = cheapestCover(ctx, f, T, mMax, onBg);
      if (cfg) target = { gpu: bg.id, cfg };
    }
    if (!target) return false;
    const { smShare, quota, batchSize } = target.cfg;
    overlay.place(`new-${add.length}`, fn, target.gpu, smShare, quota);
    add.push({ gpu: target.gpu, smShare, quota, batchSize });
    fleet.push({ smShare, quota, batchSize });
    notes.push(`+replica on ${target.gpu} (s=${smShare}, q=${quota}, b=${batchSize})`);
    return true;
  };

  return {
    name: 'hybrid',
    sloGuard: true,
    initialState: () => ({ pred: predictor.init(), lastScaleDownMs: null, samples: [] }),
    decide(spec, state, obs, now) {
      const fn = spec.name;
      const rps = observedRps(obs);
      const pred = predictor.observe(state.pred, rps);
      // Scale to zero (spec.idleToZeroMs with min_scale 0). The forecast cannot get there: with
      // nothing observed the Kalman mean goes to 0 but its upper quantile keeps z·√(P+Q+D) (P → 2.7
      // with Q=1, D=10: 1.28·3.7 ≈ 4.7 req/s at q0.9), the noise of the next observation, and the
      // R_min floor below is at least one replica. Neither is evidence of load: after the idle
      // window the decision is zero replicas; at zero with no work it holds there (the gateway
      // wakes the function on a request). Functions without idleToZeroMs are untouched.
      if (spec.minScale === 0 && spec.idleToZeroMs !== undefined) {
        const idle = idleSince(state.idleSinceMs, { arrivals: obs.arrivals, queueLength: obs.queueLength, inFlight: obs.inFlight, replicas: obs.replicas.length }, now);
        const quiet = obs.arrivals === 0 && obs.queueLength === 0 && obs.inFlight === 0;
        const toZero = idleLongEnough(idle, spec.idleToZeroMs, now);
        if (toZero || (obs.replicas.length === 0 && quiet)) {
          const head = `hybrid: observed ${fmt(rps)} req/s`;
          const reason = toZero ? `${head}; idle ${fmt((now - idle!) / 1000)} s ≥ ${fmt(spec.idleToZeroMs / 1000)} s with min_scale 0: scale to zero` : `${head}; at zero, idle`;
          const decision: Decision = { replicas: 0, quotas: [], add: [], remove: obs.replicas.map((r) => r.id), weights: {}, reason };
          return { decision, nextState: { ...state, pred, idleSinceMs: null }, reason };
        }
        state = { ...state, idleSinceMs: idle };
      }
      const R0 = Math.max(upper(predictor.forecast(pred), p.quantile), p.rMin);
      // sloModel 'shared': the forecast at now + leadS (cold-start lead) from the recent trend
      let recent = state.recent;
      let lead = 0;
      if (shared && leadS > 0) {
        const w = Math.max(2, Math.round((p.trendWindowS * 1000) / Math.max(1, obs.intervalMs)));
        recent = [...(recent ?? []).slice(-(w - 1)), rps];
        lead = Math.max(0, trendSlope(recent)) * ((leadS * 1000) / Math.max(1, obs.intervalMs));
      }
      const R = R0 + lead;
      let lastUp = state.lastScaleUpMs ?? null;
      const ctx = ctxOf(spec);
      const budget = ctx.budget;
      const overlay = new ClusterOverlay(obs.cluster);
      const pods: Pod[] = obs.replicas.map((r) => ({ id: r.id, gpu: r.gpu, smShare: r.smShare, quota: r.quota, batchSize: r.batchSize, ready: r.ready }));
      let Cf = 0;
      for (const x of pods) Cf += podCap(ctx, x);
      const quotas = new Map<string, number>();
      const add: Placement[] = [];
      const remove: string[] = [];
      const notes: string[] = [];
      const floor = Math.max(1, spec.minScale);

      let nextDown = state.lastScaleDownMs;
      // sloModel 'shared': the fleet as one queue (see the class comment)
      const fleet: Member[] = pods.slice();
      let notReady = 0;
      for (const r of obs.replicas) if (!r.ready) notReady++;
      const st: Step = { fn, spec, ctx, overlay, pods, fleet, add, notes };
      if (shared) {
        Cf = fleetCap(ctx, fleetOf(ctx, fleet));
        const T = R / p.alpha;
        while (pods.length + add.length < floor) if (!placeShared(st, T)) break;
        const down = R < p.beta * Cf && (state.lastScaleDownMs === null || now - state.lastScaleDownMs >= p.cooldownS * 1000) && (lastUp === null || now - lastUp >= p.cooldownS * 1000);
        // bridge release (ours): once a new replica is ready, quotas step down (no removals) to what fits
        // R/downUtil, as in a scale-down: the share raised to carry a burst through the cold start is
        // released when the burst has passed, not held until R < β·C
        const trim = !down && p.bridgeTrim && notReady < (state.notReady ?? 0) && R <= p.alpha * Cf;
        if (R > p.alpha * Cf) {
          // vertical first: more SMs first, quota up in steps of ΔI_q until the fleet fits R/α
          const order = [...pods].sort((a, b) => b.smShare - a.smShare);
          for (const x of order) {
            if (fits(ctx, fleetOf(ctx, fleet), T)) break;
            const aq = overlay.maxQuotaFor(x.id, x.gpu);
            const before = x.quota;
            for (let n = 1; r6(before + n * p.quotaStep) <= aq + EPS; n++) {
              x.quota = r6(before + n * p.quotaStep);
              if (fits(ctx, fleetOf(ctx, fleet), T)) break;
            }
            if (x.quota !== before) {
              notes.push(`quota ${x.id} ${before}→${x.quota}`);
              overlay.setQuota(x.id, x.gpu, x.quota);
              quotas.set(x.id, x.quota);
            }
          }
          // then horizontal: the cheapest replica(s) that make the shared queue fit
          while (!fits(ctx, fleetOf(ctx, fleet), T) && pods.length + add.length < spec.maxScale && add.length < p.maxNewPerTick) {
            if (!placeShared(st, T)) {
              notes.push('no capacity for another replica');
              break;
            }
          }
        } else if (down || trim) {
          // down to the cheapest fleet that still fits max(R/downUtil, R_min) (hysteresis): fewest
          // SMs first, a replica goes when the rest fit without it, else its quota steps down while the
          // fleet fits. A trim (a replica just became ready) only steps quotas down.
          const Td = Math.max(R / p.downUtil, p.rMin);
          let left = pods.length;
          const order = [...pods].sort((a, b) => a.smShare - b.smShare || Number(a.ready) - Number(b.ready) || a.quota - b.quota);
          for (const x of order) {
            if (down && left > floor && fits(ctx, fleetOf(ctx, fleet, x), Td)) {
              remove.push(x.id);
              overlay.remove(x.id, x.gpu);
              fleet.splice(fleet.indexOf(x), 1);
              left--;
              notes.push(`-replica ${x.id}`);
              continue;
            }
            const before = x.quota;
            for (;;) {
              const nq = r6(x.quota - p.quotaStep);
              if (nq < p.minQuota - EPS || !(podCap(ctx, x, nq) > 0)) break;
              const was = x.quota;
              x.quota = nq;
              if (!fits(ctx, fleetOf(ctx, fleet), Td)) {
                x.quota = was;
                break;
              }
            }
            if (x.quota !== before) {
              quotas.set(x.id, x.quota);
              overlay.setQuota(x.id, x.gpu, x.quota);
              notes.push(`quota ${x.id} ${before}→${x.quota}`);
            }
          }
          if (trim && quotas.size > 0) notes.push('a replica became ready: quotas stepped down to fit R/downUtil');
          if (quotas.size > 0 || remove.length > 0) nextDown = now;
        }
      } else {
      // R_min / min_scale: at least one replica, always.
      while (pods.length + add.length < floor) {
        const placed = add.length;
        const c = addOne(st, Math.max(R / p.alpha - Cf, 0));
        // nothing placed (no device has room, or the function has no profile to size a replica by)
        if (add.length === placed || (c <= 0 && add.length + pods.length < floor && !overlay.base.canAddGpu)) break;
        Cf += c;
      }

      if (R > p.alpha * Cf) {
        let dR = R - p.alpha * Cf;
        // vertical first: more SMs first, quota up in steps of ΔI_q within the slot's free quota
        const order = [...pods].sort((a, b) => b.smShare - a.smShare);
        for (const x of order) {
          if (dR <= 0) break;
          const aq = overlay.maxQuotaFor(x.id, x.gpu);
          const base = podCap(ctx, x);
          let newQ = x.quota;
          let dC = 0;
          for (let n = 1; r6(x.quota + n * p.quotaStep) <= aq + EPS && dR - dC > 0; n++) {
            newQ = r6(x.quota + n * p.quotaStep);
            dC = podCap(ctx, x, newQ) - base;
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
          const c = addOne(st, dR);
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
            const c = podCap(ctx, x);
            const nq = r6(x.quota - p.quotaStep);
            const dc = nq < p.minQuota - EPS ? c : c - podCap(ctx, x, nq);
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
      }

      // Dilu lazy window composes with the above: it gates adding and removing replicas only.
      let samples = state.samples;
      if (p.lazy) {
        samples = pushSample(samples, rps, lazyP, obs.intervalMs / 1000);
        const qmax = (x: Pod) => Math.max(x.quota, obs.cluster.gpus.length ? overlay.maxQuotaFor(x.id, x.gpu) : 1);
        const ceiling = (xs: Pod[]) => (shared ? fleetCap(ctx, fleetOf(ctx, xs.map((x) => ({ batchSize: x.batchSize, smShare: x.smShare, quota: qmax(x) })))) : xs.reduce((a, x) => a + podCap(ctx, x, qmax(x)), 0));
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
          const smallest = [...pods].sort((a, b) => podCap(ctx, a) - podCap(ctx, b))[0];
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
      if (shared && (add.length > 0 || obs.replicas.some((r) => (quotas.get(r.id) ?? 0) > r.quota + EPS))) lastUp = now;
      const head = `hybrid: R=${fmt(R)} req/s (${predictor.name} q${p.quantile}, observed ${fmt(rps)}${lead > 0 ? `, +${fmt(lead)} cold-start lead` : ''}), C=${fmt(Cf)} req/s, budget ${fmt(budget)} ms`;
      const nextState: HybridState = { pred, lastScaleDownMs: nextDown, samples, ...(shared ? { lastScaleUpMs: lastUp, recent, notReady } : {}), ...(state.idleSinceMs !== undefined ? { idleSinceMs: state.idleSinceMs } : {}) };
      if (quotaList.length === 0 && add.length === 0 && remove.length === 0) {
        const d = noChange(spec, obs, cap, notes.length ? `${head}; ${notes.join('; ')}` : `${head}; within [${p.beta}, ${p.alpha}]·C`);
        return { decision: d, nextState, reason: d.reason };
      }
      const decision: Decision = {
        replicas: kept.length + add.length,
        quotas: quotaList,
        add,
        remove,
        weights: weightsByCapability(cap, fn, kept),
        reason: `${head}; ${notes.join('; ')}`,
      };
      return { decision, nextState, reason: decision.reason };
    },
  };
}

export type { Observation };
