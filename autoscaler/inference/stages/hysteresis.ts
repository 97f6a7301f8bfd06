/**
 * Hysteresis stages: when capacity comes down and how far (scale-down below β·C, cooldowns), and
 * Dilu's lazy window, which delays adding and removing replicas (not quota changes).
 */
import { lazyIn, lazyOut, pushSample } from '../lazy';
import { EPS, Replica, r6 } from '../hybrid-params';
import type { Member } from '../hybrid-fleet';
import type { FleetQueueModel, PerReplicaModel } from './slo-model';
import type { Draft, HysteresisStage, SloModelStage, StageDeps } from './types';

/**
 * Dilu's lazy window (p.lazy): a scale-out waits until the window's samples exceed what the
 * replicas could carry at their largest quotas; a scale-in until they fit one replica fewer.
 */
function lazyGate({ p }: StageDeps, model: SloModelStage): (d: Draft) => number[] {
  const lazyP = { windowS: p.lazyWindowS, phiOut: p.phiOut, phiIn: p.phiIn };
  return (d) => {
    let samples = d.state.samples;
    if (!p.lazy) return samples;
    const { ctx, overlay, obs, replicas, add, remove, notes } = d;
    samples = pushSample(samples, d.rps, lazyP, obs.intervalMs / 1000);
    const qmax = (x: Replica) => Math.max(x.quota, obs.cluster.gpus.length ? overlay.maxQuotaFor(x.id, x.gpu) : 1);
    const ceiling = (xs: Replica[]) => model.capacity(ctx, xs.map((x): Member => ({ batchSize: x.batchSize, smShare: x.smShare, quota: qmax(x) })));
    const needed = Math.max(0, d.floor - replicas.length);
    if (add.length > needed) {
      if (lazyOut(samples, ceiling(replicas), lazyP)) samples = [];
      else {
        notes.push(`lazy: scale-out waits (${add.length - needed} replica(s))`);
        add.splice(needed);
      }
    }
    if (remove.length > 0) {
      const smallest = [...replicas].sort((a, b) => model.capOf(ctx, a.batchSize, a.smShare, a.quota) - model.capOf(ctx, b.batchSize, b.smShare, b.quota))[0];
      const oneLess = replicas.filter((x) => x !== smallest);
      if (lazyIn(samples, ceiling(oneLess), lazyP)) samples = [];
      else {
        notes.push(`lazy: scale-in waits (${remove.length} replica(s))`);
        remove.splice(0);
      }
    }
    return samples;
  };
}

/**
 * Per-replica models (Algorithm 1): below β·C, and cooldownS after the last scale-down, the gap
 * α·C − R is given back: quotas step down, fewest SMs first, and a replica whose next step would
 * leave nothing is removed, keeping the floor and R_min.
 */
export function betaScaleDown(deps: StageDeps, model: PerReplicaModel): HysteresisStage {
  const { p } = deps;
  const replicaCap = (d: Draft, x: Replica, q = x.quota) => model.capOf(d.ctx, x.batchSize, x.smShare, q);
  return {
    down(d) {
      const { state, now, R, Cf, overlay, remove, quotas, notes } = d;
      if (!(R < p.beta * Cf && (state.lastScaleDownMs === null || now - state.lastScaleDownMs >= p.cooldownS * 1000))) return;
      let dR = p.alpha * Cf - R;
      let left = d.replicas.length;
      let capLeft = Cf;
      const order = [...d.replicas].sort((a, b) => a.smShare - b.smShare || Number(a.ready) - Number(b.ready) || a.quota - b.quota);
      for (const x of order) {
        if (dR <= 0) break;
        const before = x.quota;
        for (;;) {
          const c = replicaCap(d, x);
          const nq = r6(x.quota - p.quotaStep);
          const dc = nq < p.minQuota - EPS ? c : c - replicaCap(d, x, nq);
          if (dc >= c - EPS) {
            // the next step would leave nothing: remove the replica (horizontal scale-down)
            if (c <= dR && left > d.floor && capLeft - c >= p.rMin) {
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
      if (quotas.size > 0 || remove.length > 0) d.nextDown = now;
    },
    gate: lazyGate(deps, model),
    patch: () => ({}),
  };
}

/**
 * sloModel 'shared' (ours): a scale-down (triggered at R < β·C, cooldownS after the last scale-down
 * and the last scale-up) keeps the cheapest fleet that still fits max(R/downUtil, R_min), not R/α:
 * fewest SMs first, a replica goes when the rest fit without it, else its quota steps down while
 * the fleet fits. Bridge release (p.bridgeTrim): once a new replica is ready, quotas only step
 * down to what fits R/downUtil, as in a scale-down: the share raised to carry a burst through the
 * cold start is released when the burst has passed, not held until R < β·C.
 */
export function downUtilScaleDown(deps: StageDeps, model: FleetQueueModel): HysteresisStage {
  const { p } = deps;
  const { fits, fleetOf } = model.fleet;
  return {
    down(d) {
      const { state, now, R, Cf, ctx, overlay, fleet, remove, quotas, notes } = d;
      const lastUp = state.lastScaleUpMs ?? null;
      const down = R < p.beta * Cf && (state.lastScaleDownMs === null || now - state.lastScaleDownMs >= p.cooldownS * 1000) &&
        (lastUp === null || now - lastUp >= p.cooldownS * 1000);
      const trim = !down && p.bridgeTrim && d.notReady < (state.notReady ?? 0) && R <= p.alpha * Cf;
      if (!down && !trim) return;
      const Td = Math.max(R / p.downUtil, p.rMin);
      let left = d.replicas.length;
      const order = [...d.replicas].sort((a, b) => a.smShare - b.smShare || Number(a.ready) - Number(b.ready) || a.quota - b.quota);
      for (const x of order) {
        if (down && left > d.floor && fits(ctx, fleetOf(ctx, fleet, x), Td)) {
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
          if (nq < p.minQuota - EPS || !(model.capOf(ctx, x.batchSize, x.smShare, nq) > 0)) break;
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
      if (quotas.size > 0 || remove.length > 0) d.nextDown = now;
    },
    gate: lazyGate(deps, model),
    /** The last scale-up (for the removals' cooldown) and the replicas not ready (for the bridge release). */
    patch(d) {
      let lastUp = d.state.lastScaleUpMs ?? null;
      if (d.add.length > 0 || d.obs.replicas.some((r) => (d.quotas.get(r.id) ?? 0) > r.quota + EPS)) lastUp = d.now;
      return { lastScaleUpMs: lastUp, notReady: d.notReady };
    },
  };
}
