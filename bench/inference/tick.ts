import { ProfileCapability, LatencyPoint } from '../../autoscaler/rapp/profile-capability';
import { createPolicy } from '../../autoscaler/inference/registry';
import { ClusterView, ScalingSpec, Observation } from '../../autoscaler/inference/types';
import { readRapp } from '../../autoscaler/sim/latency-data';
import { mulberry32 } from '../../autoscaler/sim/rng';

/**
 * Wall time of one hybrid decision round over `n` functions (2 replicas each at SM 0.5 / quota 0.4,
 * two functions per GPU), each observing U(0.2, 2)× its current capability, so some scale down,
 * some hold and some scale up (vertically and onto other GPUs). Round 1 also builds each
 * function's configuration table (reported apart); the median is over the later rounds, ms.
 * Functions running the same model share one profile (and so the policy's per-profile tables);
 * `distinctProfiles` gives each function its own copy, as the live loop's per-function deploy-time
 * profiles would, so nothing is shared (the worst case for round 1). `profiles` (by model) replaces
 * the measured RaPP profiles (bench:rapp passes predicted ones).
 */
export function tickTimeMs(dataDir: string, n = 3200, reps = 6, distinctProfiles = false, params: Record<string, unknown> = {},
  profiles?: Record<string, LatencyPoint[]>): { medianMs: number; firstMs: number; rounds: number[] } {
  const { specs, cluster, capability } = setup(dataDir, n, distinctProfiles, profiles);
  const policy = createPolicy('hybrid', params, { capability });
  const rand = mulberry32(7);
  const states = specs.map((s) => policy.initialState(s));
  const rounds: number[] = [];
  for (let r = 0; r < reps; r++) {
    const obs: Observation[] = specs.map((s, i) => ({
      intervalMs: 1000,
      arrivals: Math.floor(capability.capability(s.name, 4, 0.5, 0.4) * 2 * (0.2 + 1.8 * rand())),
      completions: 0,
      rejected: 0,
      queueLength: 0,
      inFlight: 0,
      latencyMs: { p50: NaN, p95: NaN, p99: NaN },
      replicas: ['a', 'b'].map((x) => ({ id: `${s.name}-${x}`, gpu: `gpu-${Math.floor(i / 2)}`, smShare: 0.5, quota: 0.4, batchSize: 4, ready: true,
        throughputRps: 0 })),
      cluster,
    }));
    const t0 = performance.now();
    for (let i = 0; i < n; i++) states[i] = policy.decide(specs[i], states[i], obs[i], 1000 * (r + 1)).nextState;
    rounds.push(performance.now() - t0);
  }
  const sorted = rounds.slice(1).sort((a, b) => a - b);
  return { medianMs: sorted[Math.floor(sorted.length / 2)], firstMs: rounds[0], rounds };
}

/**
 * The functions, the cluster and the capability model. A function apart, so the profile points
 * (which ProfileCapability reduces to dense grids) are garbage once it returns, as in the live loop.
 */
export const TICK_MODELS = ['resnet50', 'resnet18', 'mobilenet_v3_large', 'densenet121', 'vgg16', 'efficientnet_b0', 'convnext_tiny', 'shufflenet_v2_x1_0'];

function setup(dataDir: string, n: number, distinctProfiles: boolean, given?: Record<string, LatencyPoint[]>): {
  specs: ScalingSpec[]; cluster: ClusterView; capability: ProfileCapability;
} {
  const models = TICK_MODELS;
  const rapp = given ?? readRapp(dataDir, models);
  const profiles: Record<string, (typeof rapp)[string]> = {};
  const specs: ScalingSpec[] = [];
  const cluster: ClusterView = { gpus: [], canAddGpu: true };
  for (let i = 0; i < n; i++) {
    const name = `fn${i}`;
    profiles[name] = distinctProfiles ? rapp[models[i % models.length]].map((x) => ({ ...x })) : rapp[models[i % models.length]];
    specs.push({ name, minScale: 1, maxScale: 64, sloLatencyMs: 100, sloPercentile: 99, maxBatchSize: 4 });
    const g = Math.floor(i / 2);
    if (!cluster.gpus[g]) cluster.gpus[g] = { id: `gpu-${g}`, slots: [] };
    cluster.gpus[g].slots.push({ smShare: 0.5, members: [{ replicaId: `${name}-a`, fn: name, quota: 0.4 }, { replicaId: `${name}-b`, fn: name, quota: 0.4 }] });
  }
  return { specs, cluster, capability: new ProfileCapability(profiles) };
}
