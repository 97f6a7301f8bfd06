import { ClusterOverlay, MAX_SM_PARTITIONS, newReplicaOptions, occupancy } from './cluster';
import { Capability, Decision, ScalingSpec, Observation, Placement, PolicyParams, ReplicaState } from './types';

/**
 * Parameters: defaults, overridden by `params`, validated. Every value keeps its default's type;
 * a wrong one throws a message naming the policy, the field and the value (Knative-style config).
 */
export function parseParams<T extends Record<string, number | boolean | string>>(policy: string, defaults: T, params: PolicyParams = {}): T {
  const out: Record<string, number | boolean | string> = { ...defaults };
  for (const [k, v] of Object.entries(params)) {
    if (!(k in defaults)) throw new Error(`${policy}: unknown parameter "${k}" (known: ${Object.keys(defaults).join(', ')})`);
    const want = typeof defaults[k];
    if (want === 'number') {
      const n = typeof v === 'string' ? Number(v) : v;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`${policy}: ${k} must be a number, got ${JSON.stringify(v)}`);
      out[k] = n;
    } else if (want === 'boolean') {
      if (v === true || v === 'true' || v === '1') out[k] = true;
      else if (v === false || v === 'false' || v === '0') out[k] = false;
      else throw new Error(`${policy}: ${k} must be true or false, got ${JSON.stringify(v)}`);
    } else out[k] = String(v);
  }
  return out as T;
}

/** Observed arrival rate over the interval, req/s. */
export function observedRps(obs: Observation): number {
  return obs.intervalMs > 0 ? (obs.arrivals * 1000) / obs.intervalMs : 0;
}

/** Load-balancer weights proportional to each replica's capability (equal when all are 0). */
export function weightsByCapability(cap: Capability, fn: string,
  replicas: Array<Pick<ReplicaState, 'id' | 'batchSize' | 'smShare' | 'quota'>>): Record<string, number> {
  const caps = replicas.map((r) => cap.capability(fn, r.batchSize, r.smShare, r.quota));
  const total = caps.reduce((a, b) => a + b, 0);
  // keyed by replica ids (unique per function): a dictionary object from the start, so V8 does not
  // grow a hidden-class transition per new id (that cost ~8 µs a call across 3,200 functions)
  const w: Record<string, number> = Object.create(null);
  replicas.forEach((r, i) => (w[r.id] = total > 0 ? caps[i] / total : 1 / replicas.length));
  return w;
}

/** Largest profiled batch ≤ maxBatch whose latency fits `budgetMs`; the smallest batch if none does. */
export function chooseBatch(cap: Capability, fn: string, maxBatch: number, smShare: number, quota: number, budgetMs: number): number {
  const bs = cap.grid(fn).batches.filter((b) => b <= Math.max(1, maxBatch));
  if (bs.length === 0) return 1;
  for (let i = bs.length - 1; i >= 0; i--) if (cap.latencyMs(fn, bs[i], smShare, quota) <= budgetMs) return bs[i];
  return bs[0];
}

/** A fixed per-replica resource configuration of a horizontal-only policy. */
export interface ReplicaConfig {
  /** true: a whole device per replica (smShare = quota = 1). */
  exclusive: boolean;
  smShare: number;
  quota: number;
  batchSize: number;
}

/**
 * Places `count` replicas of a fixed configuration: exclusive ones each on a new device; fractional
 * ones FaST-GShare-like, on the used device with the lowest occupancy that has room in an SM slot of
 * that size (or room to open one), else on a new device.
 */
export function placeFixed(overlay: ClusterOverlay, fn: string, cfg: ReplicaConfig, count: number, maxSmTypes = MAX_SM_PARTITIONS): Placement[] {
  const out: Placement[] = [];
  for (let k = 0; k < count; k++) {
    let gpu: string | undefined;
    if (!cfg.exclusive) {
      let best = Infinity;
      for (const g of overlay.gpus()) {
        const fits = newReplicaOptions(g, maxSmTypes, [cfg.smShare], cfg.quota)
          .some((o) => Math.abs(o.smShare - cfg.smShare) < 1e-9 && o.maxQuota >= cfg.quota - 1e-9);
        const h = occupancy(g);
        if (fits && h < best) {
          best = h;
          gpu = g.id;
        }
      }
    }
    if (!gpu) {
      if (!overlay.base.canAddGpu) break;
      gpu = overlay.newGpuId();
    }
    const p: Placement = cfg.exclusive
      ? { gpu, smShare: 1, quota: 1, batchSize: cfg.batchSize }
      : { gpu, smShare: cfg.smShare, quota: cfg.quota, batchSize: cfg.batchSize };
    overlay.place(`pending-${k}`, fn, gpu, p.smShare, p.quota);
    out.push(p);
  }
  return out;
}

/**
 * The decision of a horizontal-only policy that wants `target` replicas of configuration `cfg`:
 * adds placed by `placeFixed`, removals taking replicas still starting first, then the last listed.
 */
export function resizeTo(spec: ScalingSpec, obs: Observation, cap: Capability, target: number, cfg: ReplicaConfig, reason: string): Decision {
  const n = obs.replicas.length;
  const want = Math.max(spec.minScale, Math.min(spec.maxScale, Math.round(target)));
  let add: Placement[] = [];
  let remove: string[] = [];
  if (want > n) add = placeFixed(new ClusterOverlay(obs.cluster), spec.name, cfg, want - n);
  else if (want < n) {
    const order = [...obs.replicas].sort((a, b) => Number(a.ready) - Number(b.ready));
    remove = order.slice(0, n - want).map((r) => r.id);
  }
  const kept = obs.replicas.filter((r) => !remove.includes(r.id));
  const replicas = n + add.length - remove.length;
  const why = replicas === n ? `${reason}; keep ${n}` : `${reason}; ${n} → ${replicas} replicas`;
  // every replica runs at the fixed configuration: one the platform started before any decision
  // (min_scale at deploy, a restart) or that another policy left is set to it too
  const q = cfg.exclusive ? 1 : cfg.quota;
  const quotas = kept.filter((r) => Math.abs(r.quota - q) > 1e-9).map((r) => ({ replicaId: r.id, quota: q }));
  return { replicas, quotas, add, remove, weights: weightsByCapability(cap, spec.name, kept), reason: why };
}

/** A decision that changes nothing. */
export function noChange(spec: ScalingSpec, obs: Observation, cap: Capability, reason: string): Decision {
  return { replicas: obs.replicas.length, quotas: [], add: [], remove: [], weights: weightsByCapability(cap, spec.name, obs.replicas), reason };
}

export const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
