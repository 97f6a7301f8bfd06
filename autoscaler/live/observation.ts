/**
 * Pure conversions from what the platform stores (per-second counters, replicas, the autoscaler's
 * placements) to the policy contract's `Observation` and `ClusterView`.
 */
import { latencyPercentiles } from '../inference/histogram';
import type { ClusterView, ScalingSpec, GpuView, Observation, ReplicaState } from '../inference/types';

/** Per-second counters as the gateway stores them (`gateway/metrics/second-window.ts`). */
export interface Counters {
  arrivals: number;
  completions: number;
  rejected: number;
  queue: number;
  inflight: number;
  buckets: number[];
  perReplica: Record<string, number>;
}

/** A replica with where the autoscaler placed it. */
export interface PlacedReplica {
  id: string;
  fn: string;
  ready: boolean;
  /** Device id, e.g. `cpu0`. */
  gpu: string;
  smShare: number;
  quota: number;
  batchSize: number;
}

/** Devices grouped into SM slots with their members (HAS-GPU's view of the node). */
export function clusterView(devices: readonly string[], placed: readonly PlacedReplica[]): ClusterView {
  const gpus: GpuView[] = [];
  for (const id of devices) {
    const members = placed.filter((r) => r.gpu === id);
    if (members.length === 0) continue;
    const byShare = new Map<number, GpuView['slots'][number]>();
    for (const m of members) {
      let slot = byShare.get(m.smShare);
      if (!slot) byShare.set(m.smShare, (slot = { smShare: m.smShare, members: [] }));
      slot.members.push({ replicaId: m.id, fn: m.fn, quota: m.quota });
    }
    gpus.push({ id, slots: [...byShare.values()] });
  }
  return { gpus, canAddGpu: gpus.length < devices.length };
}

/** One interval's observation of one function. Missing counters mean nothing happened. */
export function toObservation(c: Counters | undefined, replicas: readonly PlacedReplica[], cluster: ClusterView, intervalMs: number): Observation {
  const secs = intervalMs / 1000;
  const lat = c && c.completions > 0 ? latencyPercentiles(c.buckets) : { p50: NaN, p95: NaN, p99: NaN };
  const states: ReplicaState[] = replicas.map((r) => ({
    id: r.id,
    gpu: r.gpu,
    smShare: r.smShare,
    quota: r.quota,
    batchSize: r.batchSize,
    ready: r.ready,
    throughputRps: (c?.perReplica[r.id] ?? 0) / secs,
  }));
  return {
    intervalMs,
    arrivals: c?.arrivals ?? 0,
    completions: c?.completions ?? 0,
    rejected: c?.rejected ?? 0,
    queueLength: c?.queue ?? 0,
    inFlight: c?.inflight ?? 0,
    latencyMs: lat,
    ...(c && c.completions > 0 ? { latencyBuckets: [...c.buckets] } : {}),
    replicas: states,
    cluster,
  };
}

/** The least-occupied device with room, for a replica that appeared without a planned placement. */
export function defaultDevice(devices: readonly string[], placed: readonly PlacedReplica[]): string {
  let best = devices[0];
  let bestLoad = Infinity;
  for (const d of devices) {
    const load = placed.filter((r) => r.gpu === d).reduce((s, r) => s + r.smShare * r.quota, 0);
    if (load < bestLoad) {
      best = d;
      bestLoad = load;
    }
  }
  return best;
}

/** The policy's view of a deployed function; functions without an SLO get `defaultSloMs`. */
export function policySpec(
  name: string,
  ml: { minScale: number; maxScale: number; sloLatencyMs?: number; sloPercentile: number; maxBatchSize?: number },
  defaultSloMs: number,
): ScalingSpec {
  return {
    name,
    minScale: ml.minScale,
    maxScale: ml.maxScale,
    sloLatencyMs: ml.sloLatencyMs ?? defaultSloMs,
    sloPercentile: ml.sloPercentile,
    maxBatchSize: ml.maxBatchSize ?? 8,
  };
}

/**
 * The desired count to write for a policy's decision. The policy counts the replicas it sees,
 * which during a rolling update (or a drain) include old ones waiting to retire beyond the
 * desired count; writing its count back as desired would start that many new ones, and those
 * again (the reproduced runaway to 338 replicas). So the replicas seen beyond `desired` are
 * taken off first; then the result is clamped to [min_scale, max_scale].
 */
export function targetReplicas(decided: number, observed: number, desired: number, minScale: number, maxScale: number): number {
  const extra = Math.max(0, observed - desired);
  const want = Math.max(0, Math.round(decided) - extra);
  return Math.min(Math.max(want, minScale), maxScale);
}
