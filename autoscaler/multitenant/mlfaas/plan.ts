/**
 * Replica planning for the fixed-cluster controller (the slow half: a new replica costs a cold
 * start). Per job: the fewest replicas that carry the forecast's upper band over the planning
 * horizon within the target at a quota of at most qPlan (so a quota rise has headroom), added at
 * once, removed one at a time after the plan has stayed below for a hold. A job whose previous
 * change is still under way (replicas starting) is left alone: the runner serves one change at a
 * time. A removed replica's pod stays idle, still holding its quota, until the runner reclaims it
 * (`podIdleS`); the plan counts it ("ghost") and reuses it first.
 */
import { quotaFor, type LatencyModel } from './latency';

export interface PlanParams {
  readonly model: LatencyModel;
  readonly qFloor: number;
  readonly qPlan: number;
  readonly downHoldTicks: number;
  /** How long a removed replica's pod still holds its quota (s). */
  readonly podIdleS: number;
}

export interface PlanState {
  /** Ticks the plan has stayed below the replicas held. */
  below: number;
  /** Expiry times (s) of idle pods left by removals. */
  ghosts: number[];
}

export const freshPlan = (): PlanState => ({ below: 0, ghosts: [] });

/** Fewest replicas (≤ nMax) that carry `rate` within the target at a quota ≤ qPlan. */
export function replicasFor(p: PlanParams, pMs: number, rate: number, targetMs: number, nMax: number): number {
  for (let n = 1; n <= nMax; n++) {
    const q = quotaFor(p.model, pMs, rate, n, targetMs, p.qFloor);
    if (q !== null && q <= p.qPlan) return n;
  }
  return nMax;
}

export interface PlanInput {
  readonly nowS: number;
  /** Replicas now (ready + starting) and ready. */
  readonly replicas: number;
  readonly ready: number;
  /** The runner says the job's previous change is still under way (optional). */
  readonly scaling?: boolean;
  /** Replicas wanted (the budget filled) and the fewest the forecast needs. */
  readonly want: number;
  readonly wantMin: number;
}

/** The replica count to ask for, and the pods (replicas + idle ones) that will hold quota. */
export function planReplicas(p: PlanParams, st: PlanState, x: PlanInput): { replicas: number; pods: number } {
  st.ghosts = st.ghosts.filter((t) => t > x.nowS);
  let n = Math.max(1, x.replicas);
  const busy = x.ready < x.replicas || x.scaling === true;
  if (x.want > n) {
    st.below = 0;
    if (!busy) {
      const reuse = Math.min(st.ghosts.length, x.want - n);
      st.ghosts.splice(0, reuse);
      n = x.want;
    }
  } else if (x.want < n) {
    st.below += 1;
    // Below the forecast's need: never; below the filled share by one: only after the hold.
    if (st.below >= p.downHoldTicks && !busy && n - 1 >= x.wantMin) {
      n -= 1;
      st.below = 0;
      st.ghosts.push(x.nowS + p.podIdleS);
    }
  } else st.below = 0;
  return { replicas: n, pods: n + st.ghosts.length };
}

/** The forecast level z (in [zLo, zHi]) that n replicas at quota 1 cover for a job whose rate at level z is rate(z). */
export function coverage(p: PlanParams, pMs: number, targetMs: number, n: number, rate: (z: number) => number, zLo = -3, zHi = 6): number {
  const ok = (z: number): boolean => {
    const q = quotaFor(p.model, pMs, rate(z), n, targetMs, p.qFloor);
    return q !== null && q <= p.qPlan;
  };
  if (!ok(zLo)) return zLo;
  if (ok(zHi)) return zHi;
  let lo = zLo;
  let hi = zHi;
  for (let k = 0; k < 16; k++) {
    const mid = (lo + hi) / 2;
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * Fills a budget of replicas: starting from each job's `want`, one more replica at a time to the
 * job whose replicas cover the lowest forecast level, until the wants add up to `budget` (the
 * cluster's CPU is there to be used: a replica held ready is one that needs no cold start later).
 */
export function fillReplicas(wants: readonly number[], budget: number, cover: (job: number, n: number) => number, nMax: number): number[] {
  const out = wants.slice();
  let total = out.reduce((s, x) => s + x, 0);
  const cov = out.map((n, i) => cover(i, n));
  for (let guard = 0; total < budget && guard < 10000; guard++) {
    let best = -1;
    for (let i = 0; i < out.length; i++) if (out[i] < nMax && (best < 0 || cov[i] < cov[best])) best = i;
    if (best < 0) break;
    out[best]++;
    total++;
    cov[best] = cover(best, out[best]);
  }
  return out;
}
