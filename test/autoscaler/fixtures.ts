import { ProfileCapability, LatencyPoint } from '../../autoscaler/rapp/profile-capability';
import { ClusterView, ScalingSpec, Observation, ReplicaState } from '../../autoscaler/inference/types';

/**
 * A synthetic profile shaped like the RaPP data: latency = 20 ms × batch^0.3 / quota, flat in SM
 * above 0.2 and 1.5× slower below, on SM {0.1..1} × quota {0.1..1} × batch {1, 2, 4}.
 */
export function synthProfile(): LatencyPoint[] {
  const out: LatencyPoint[] = [];
  for (const batch of [1, 2, 4])
    for (let s = 1; s <= 10; s++)
      for (let q = 1; q <= 10; q++) out.push({ batch, smShare: s / 10, quota: q / 10, latencyMs: (20 * Math.pow(batch, 0.3) * (s < 2 ? 1.5 : 1)) / (q / 10) });
  return out;
}

export const cap = () => new ProfileCapability({ f: synthProfile() });

export class SpecBuilder {
  private s: ScalingSpec = { name: 'f', minScale: 1, maxScale: 10, sloLatencyMs: 200, sloPercentile: 99, maxBatchSize: 4 };
  slo(ms: number) { this.s.sloLatencyMs = ms; return this; }
  minScale(n: number) { this.s.minScale = n; return this; }
  maxScale(n: number) { this.s.maxScale = n; return this; }
  build(): ScalingSpec { return { ...this.s }; }
}
export const aFunction = () => new SpecBuilder();

export function replica(id: string, gpu: string, smShare: number, quota: number, extra: Partial<ReplicaState> = {}): ReplicaState {
  return { id, gpu, smShare, quota, batchSize: 1, ready: true, throughputRps: 0, ...extra };
}

/** A cluster view holding exactly these replicas, each in a slot of its SM share. */
export function clusterOf(reps: ReplicaState[], extra: ClusterView['gpus'] = [], canAddGpu = true): ClusterView {
  const gpus = new Map<string, ClusterView['gpus'][number]>();
  for (const g of extra) gpus.set(g.id, g);
  for (const r of reps) {
    const g = gpus.get(r.gpu) ?? { id: r.gpu, slots: [] };
    gpus.set(r.gpu, g);
    const slot = g.slots.find((s) => s.smShare === r.smShare) ?? (g.slots.push({ smShare: r.smShare, members: [] }), g.slots[g.slots.length - 1]);
    slot.members.push({ replicaId: r.id, fn: 'f', quota: r.quota });
  }
  return { gpus: [...gpus.values()], canAddGpu };
}

export function observe(arrivalsPerS: number, reps: ReplicaState[], extra: Partial<Observation> = {}): Observation {
  return { intervalMs: 1000, arrivals: arrivalsPerS, completions: arrivalsPerS, rejected: 0, queueLength: 0, inFlight: 0,
    latencyMs: { p50: NaN, p95: NaN, p99: NaN }, replicas: reps, cluster: clusterOf(reps), ...extra };
}
