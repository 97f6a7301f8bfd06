/**
 * Dilu's lazy horizontal scaling (ASPLOS'25, Sec. 3.4.2): a sliding window of per-second RPS
 * samples (40 s); scale out only when at least ϕ_out (20) samples exceeded the deployed
 * instances' serving throughput, scale in only when more than ϕ_in (30) samples were below the
 * throughput of n − 1 instances; the window is cleared after each action.
 */
export interface LazyParams {
  windowS: number;
  phiOut: number;
  phiIn: number;
}

export const DILU_LAZY: LazyParams = { windowS: 40, phiOut: 20, phiIn: 30 };

/** Appends one RPS sample, keeping the last `windowS / intervalS` samples. */
export function pushSample(samples: number[], rps: number, p: LazyParams, intervalS = 1): number[] {
  const keep = Math.max(1, Math.round(p.windowS / intervalS));
  const out = samples.length >= keep ? samples.slice(samples.length - keep + 1) : samples.slice();
  out.push(rps);
  return out;
}

/** Whether the window calls for scaling out above `capacity` req/s. */
export function lazyOut(samples: number[], capacity: number, p: LazyParams): boolean {
  let n = 0;
  for (const s of samples) if (s > capacity) n++;
  return n >= p.phiOut;
}

/** Whether the window allows scaling in to the `capacityWithOneLess` req/s of n − 1 instances. */
export function lazyIn(samples: number[], capacityWithOneLess: number, p: LazyParams): boolean {
  let n = 0;
  for (const s of samples) if (s < capacityWithOneLess) n++;
  return n >= p.phiIn;
}
