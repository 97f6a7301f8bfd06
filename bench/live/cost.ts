/** One replica as the sampler saw it: how many cores its device has and its time quota. */
export interface ReplicaSample {
  id: string;
  cores: number;
  quota: number;
  /** The device the autoscaler placed it on (`cpuN`); absent: not placed (every core). */
  device?: string;
}

/** The provider's replicas of one function at one instant (ms). */
export interface Sample {
  t: number;
  replicas: ReplicaSample[];
}

export interface CostSummary {
  /** Σ over replicas of cores × quota × time alive, s (each sample's allotment held until the next). */
  coreSeconds: number;
  /** Replica ids first seen after the first sample (starts, cold starts included). */
  coldStarts: number;
  /** Most replicas seen at once. */
  maxReplicas: number;
}

/**
 * Cost from periodic samples: left-rectangle integration of Σ cores × quota (a sample's
 * allotment holds until the next sample). Replicas present in the first sample are not starts. Pure.
 */
export function integrateCost(samples: readonly Sample[]): CostSummary {
  let coreSeconds = 0;
  let maxReplicas = 0;
  const seen = new Set<string>();
  let coldStarts = 0;
  samples.forEach((s, i) => {
    for (const r of s.replicas) {
      if (!seen.has(r.id)) {
        seen.add(r.id);
        if (i > 0) coldStarts++;
      }
    }
    maxReplicas = Math.max(maxReplicas, s.replicas.length);
    const next = samples[i + 1];
    if (next) coreSeconds += ((next.t - s.t) / 1000) * s.replicas.reduce((a, r) => a + r.cores * r.quota, 0);
  });
  return { coreSeconds, coldStarts, maxReplicas };
}

/** Allocation (cores) per bin of `binMs` from `t0`: the mean of the samples in each bin. Pure. */
export function allocationSeries(samples: readonly Sample[], t0: number, binMs: number, bins: number): number[] {
  const sum = new Array<number>(bins).fill(0);
  const n = new Array<number>(bins).fill(0);
  for (const s of samples) {
    const b = Math.floor((s.t - t0) / binMs);
    if (b < 0 || b >= bins) continue;
    sum[b] += s.replicas.reduce((a, r) => a + r.cores * r.quota, 0);
    n[b]++;
  }
  return sum.map((x, i) => (n[i] ? x / n[i] : i > 0 ? NaN : 0));
}

/** Seconds from `endMs` until the first sample with no replica, if any. Pure. */
export function scaleToZeroS(samples: readonly Sample[], endMs: number): number | undefined {
  const s = samples.find((x) => x.t >= endMs && x.replicas.length === 0);
  return s ? (s.t - endMs) / 1000 : undefined;
}
