/**
 * How a CPU node's kernel serves a replica under a CFS bandwidth quota (the live provider's
 * temporal dimension, `cpu.cfs_quota_us` over a `cpu.cfs_period_us` period): the work runs at full
 * speed while the group's budget for the current period lasts, then waits, throttled, for the next
 * period; unused budget is not carried over (cfs_burst_us 0, the kernel's default). So a sparse
 * request at quota 0.3 finishes as fast as at quota 1, while a saturated replica serves 0.3 of its
 * full-speed rate: a throughput profile (latency ÷ quota) is right only at saturation. A GPU
 * limiter measured by RaPP is not this model; the simulator uses it only where the provider
 * declares CFS enforcement. Pure.
 */

/** A replica's budget state: the period it was last charged in, and the budget used there (s). */
export interface CfsBudget {
  period: number;
  used: number;
}

/**
 * When work of `workS` seconds at full speed, started at `startS`, finishes under a budget of
 * `share` × `periodS` per period (periods aligned at multiples of `periodS`); updates `st`.
 */
export function cfsFinish(startS: number, workS: number, share: number, periodS: number, st: CfsBudget): number {
  const budget = Math.max(1e-4, Math.min(1, share)) * periodS;
  let p = Math.floor(startS / periodS);
  if (p !== st.period) {
    st.period = p;
    st.used = 0;
  }
  let t = startS;
  let left = workS;
  // bounded: each pass either finishes or moves to the next period (≤ work ÷ budget + 1 passes)
  for (let pass = 0; pass < 1e6; pass++) {
    const avail = Math.min(budget - st.used, Math.max(0, (p + 1) * periodS - t));
    if (avail >= left - 1e-12) {
      st.used += left;
      return t + left;
    }
    if (avail > 0) {
      st.used += avail;
      left -= avail;
    }
    p++;
    t = Math.max(t, p * periodS);
    st.period = p;
    st.used = 0;
  }
  return t + left / (budget / periodS);
}
