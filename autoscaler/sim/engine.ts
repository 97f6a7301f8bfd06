/**
 * The inference simulator: a fake collector and actuator around the live loop's decider
 * (`decideLive`: the registered policy with the live rules around it: idle scale to zero, the SLO
 * guard), driven by a fake clock and a discrete-event model of replicas serving a queue. What the
 * simulator adds is only what the platform's I/O does live: arrivals, service times from the
 * capability (ground truth), cold starts, and the gateway's wake of a function at zero.
 */
import { applyDecision } from '../inference/cluster';
import { decideLive, LiveState } from '../live/decider';
import { CorrectedCapability } from '../rapp/corrected-capability';
import { correctionStep, LogFactor } from '../rapp/online-correction';
import { CfsBudget, cfsFinish } from './cfs';
import { DeviceLedger } from './devices';
import { GUARD_HOLD_S } from '../inference/stages/slo-guard';
import { bucketIndex, latencyPercentiles } from '../inference/histogram';
import { createPolicy } from '../inference/registry';
import { Capability, ClusterView, Decision, InferencePolicy, LATENCY_BUCKETS_MS, Observation } from '../inference/types';
import { Heap } from '../heap';
import { slowdown } from '../inference/interference';
import { mulberry32, poisson } from './rng';
import type { SimFunction, SimOptions, FunctionResult, SimResult } from './types';

export type { SimFunction, SimOptions, FunctionResult, SimResult };

interface Replica {
  id: string;
  gpu: string;
  smShare: number;
  quota: number;
  batchSize: number;
  readyAt: number;
  busy: boolean;
  removed: boolean;
  batch: number[];
  accruedTo: number;
  done: number;
  cfs: CfsBudget;
}

interface Fn {
  sim: SimFunction;
  policy: InferencePolicy<unknown>;
  /** The decider's state (the policy's inside); undefined until the first decision. */
  state: LiveState | undefined;
  /** Desired replicas as the platform stores them (what the decider and the wake read). */
  desired: number;
  queue: number[];
  qHead: number;
  replicas: Replica[];
  lat: number[];
  hist: number[];
  arrivals: number;
  completions: number;
  rejected: number;
  /** Requests in the system (queued + executing) and its time integral since the last decision. */
  inSys: number;
  area: number;
  areaAt: number;
  r: FunctionResult;
  /** ln of the online correction factor (SimOptions.correction). */
  logK: LogFactor;
}

type Ev = { t: number; fn: Fn; rep: Replica; ready: boolean };

const percentile = (sorted: Float64Array, p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

/** Runs one policy over the functions' traces with a fake clock; the policy code is the live one. */
export function simulate(fns: SimFunction[], o: SimOptions): SimResult {
  const tickS = o.tickS ?? 1;
  const cold = o.coldStartS ?? 20;
  const price = (o.pricePerGpuHour ?? 2.48) / 3600;
  const timeout = o.timeoutS ?? 30;
  const sloGuardS = o.sloGuardS ?? 5;
  const sloGuardHoldS = o.sloGuardHoldS ?? GUARD_HOLD_S;
  const gpuLimit = o.gpuLimit ?? Infinity;
  const rand = mulberry32(o.seed ?? 42);
  const cap = o.capability;
  /** The profile the policies have (not the ground truth when `o.told` is set)... */
  const profile: Capability = o.told ?? cap;
  /** ...and what they are told: it, or it corrected online as live. */
  const corrected = o.correction ? new CorrectedCapability(profile) : undefined;
  const told: Capability = corrected ?? profile;
  const beta = o.interferenceBeta ?? 0;
  const periodS = o.cfsPeriodMs !== undefined ? o.cfsPeriodMs / 1000 : undefined;
  const scope = o.quotaScope ?? 'slot';
  const functionBatch = o.replicaBatch === 'function';
  let batches = 0;
  let oversubscribed = 0;
  let overCapacity = 0;
  const placedBySmShare: Record<string, number> = {};
  const heap = new Heap<Ev>((a, b) => a.t < b.t); // earliest event first
  const cluster: ClusterView = { gpus: [], canAddGpu: true };
  const where = new Map<string, string>();
  let nextRep = 0;
  let nextGpu = 0;
  let decideMs = 0;
  const durationS = Math.max(...fns.map((f) => f.counts.length * f.intervalS));
  const ticks = Math.ceil(durationS / tickS);
  const endT = ticks * tickS;

  const devices = new DeviceLedger<Replica>(endT);

  const S: Fn[] = fns.map((sim) => {
    const policy = createPolicy(o.policy, o.params ?? {}, { capability: told, coldStartS: cold });
    const r: FunctionResult = { name: sim.spec.name, requests: 0, violations: 0, dropped: 0, p50: NaN, p95: NaN, p99: NaN, coldStarts: 0, gpuSeconds: 0,
      cost: 0, maxReplicas: 0 };
    if (o.record) r.series = { arrivals: [], replicas: [], share: [] };
    return { sim, policy, state: undefined, desired: 0, queue: [], qHead: 0, replicas: [], lat: [], hist: new Array(LATENCY_BUCKETS_MS.length).fill(0),
      arrivals: 0, completions: 0, rejected: 0, inSys: 0, area: 0, areaAt: 0, r, logK: 0 };
  });

  /** Moves the requests-in-system integral to `t`, then applies a change of `d` requests. */
  const touch = (f: Fn, t: number, d: number) => {
    if (t > f.areaAt) {
      f.area += f.inSys * (t - f.areaAt);
      f.areaAt = t;
    }
    f.inSys += d;
  };

  const accrue = (f: Fn, rep: Replica, now: number) => {
    if (now > rep.accruedTo) f.r.gpuSeconds += (now - rep.accruedTo) * rep.smShare * rep.quota;
    rep.accruedTo = Math.max(rep.accruedTo, now);
  };

  const start = (f: Fn, rep: Replica, now: number) => {
    if (rep.busy || rep.removed || rep.readyAt > now) return;
    const q = f.queue;
    while (f.qHead < q.length && now - q[f.qHead] > timeout) {
      f.qHead++;
      touch(f, now, -1);
      f.r.dropped++;
      f.r.violations++;
      f.rejected++;
    }
    const k = Math.min(functionBatch ? Math.max(1, f.sim.spec.maxBatchSize) : rep.batchSize, q.length - f.qHead);
    if (k <= 0) return;
    rep.batch = q.slice(f.qHead, f.qHead + k);
    f.qHead += k;
    if (f.qHead > 4096 && f.qHead * 2 > q.length) {
      f.queue = q.slice(f.qHead);
      f.qHead = 0;
    }
    rep.busy = true;
    heap.push({ t: finish(f.sim.model, k, rep, now), fn: f, rep, ready: false });
  };

  /** When a batch of k started now on rep completes (the ground truth, under CFS where declared). */
  const finish = (model: string, k: number, rep: Replica, now: number): number => {
    const slow = beta > 0 ? slowdown(beta, devices.busyNeighbours(rep)) : 1;
    // the quota the replica gets for this batch: its own, or tokend's share of the device's window
    // ('device': Σ quota of the busy replicas, time-sliced; 'occupancy': Σ smShare·quota, MPS)
    const { quota, claimed, occupied } = devices.grant(rep, scope);
    batches++;
    if (claimed > 1 + 1e-9) oversubscribed++;
    if (occupied > 1 + 1e-9) overCapacity++;
    const at = (cap.latencyMs(model, k, rep.smShare, quota) * slow) / 1000;
    if (periodS === undefined || quota >= 1) return now + at;
    const full = (cap.latencyMs(model, k, rep.smShare, 1) * slow) / 1000;
    const ratio = full / at; // measured cap(q) ÷ cap(1)
    return cfsFinish(now, full, Number.isFinite(ratio) && ratio > 0 ? ratio : quota, periodS, rep.cfs);
  };

  const complete = (ev: Ev) => {
    const { fn: f, rep, t } = ev;
    if (ev.ready) return start(f, rep, t);
    for (const a of rep.batch) {
      const ms = (t - a) * 1000;
      f.lat.push(ms);
      f.hist[bucketIndex(ms)]++;
      if (ms > f.sim.spec.sloLatencyMs) f.r.violations++;
    }
    touch(f, t, -rep.batch.length);
    f.completions += rep.batch.length;
    rep.done += rep.batch.length;
    rep.batch = [];
    rep.busy = false;
    if (rep.removed) {
      f.replicas = f.replicas.filter((x) => x !== rep);
      devices.unplace(rep, t);
    } else start(f, rep, t);
  };

  const act = (f: Fn, now: number, warm: boolean) => {
    const spec = f.sim.spec;
    const live = f.replicas.filter((r) => !r.removed);
    const obs: Observation = {
      intervalMs: tickS * 1000,
      arrivals: f.arrivals,
      completions: f.completions,
      rejected: f.rejected,
      queueLength: f.queue.length - f.qHead,
      inFlight: live.reduce((a, r) => a + r.batch.length, 0),
      meanConcurrency: (touch(f, now, 0), f.area / tickS),
      latencyMs: latencyPercentiles(f.hist),
      latencyBuckets: f.hist.slice(),
      replicas: live.map((r) => ({ id: r.id, gpu: r.gpu, smShare: r.smShare, quota: r.quota, batchSize: r.batchSize, ready: r.readyAt <= now,
        throughputRps: r.done / tickS })),
      cluster,
    };
    cluster.canAddGpu = cluster.gpus.length < gpuLimit;
    if (corrected) {
      // the collector's correction, as live-autoscaler.ts runs it before the decision
      f.logK = correctionStep(f.logK, spec.name, obs, profile, periodS === undefined ? 'at-quota' : 'full-speed');
      corrected.setFactor(spec.name, f.logK);
    }
    const t0 = performance.now();
    const out = decideLive({
      policy: f.policy,
      spec,
      state: f.state,
      obs,
      now: Math.round(now * 1000),
      capability: told,
      zeroAfterMs: spec.minScale === 0 ? spec.idleToZeroMs : undefined,
      activeNow: false,
      hasProfile: true,
      desired: f.desired,
      sloGuardS,
      sloGuardHoldS,
    });
    decideMs += performance.now() - t0;
    f.state = out.next;
    if (out.decision) actuate(f, out.decision, now, warm);
    endInterval(f);
  };

  /** The actuator: the decision's quotas, removals and additions (placed as the policy planned). */
  const actuate = (f: Fn, d: Decision, now: number, warm: boolean) => {
    const spec = f.sim.spec;
    const live = f.replicas.filter((r) => !r.removed);
    const byId = new Map(live.map((r) => [r.id, r]));
    const ids = d.add.map(() => `${spec.name}-${nextRep++}`);
    const gpuIds = new Map<string, string>();
    applyDecision(cluster, spec.name, (id) => where.get(id), d, ids, () => `gpu-${nextGpu++}`, gpuIds);
    for (const q of d.quotas) {
      const rep = byId.get(q.replicaId);
      if (!rep) continue;
      accrue(f, rep, now);
      rep.quota = q.quota;
    }
    for (const id of d.remove) {
      const rep = byId.get(id);
      if (!rep) continue;
      accrue(f, rep, now);
      rep.removed = true;
      where.delete(id);
      if (!rep.busy) {
        f.replicas = f.replicas.filter((x) => x !== rep);
        devices.unplace(rep, now);
      }
    }
    d.add.forEach((p, k) => {
      const gpu = p.gpu.startsWith('new:') ? gpuIds.get(p.gpu)! : p.gpu;
      const rep: Replica = { id: ids[k], gpu, smShare: p.smShare, quota: p.quota, batchSize: Math.max(1, p.batchSize), readyAt: warm ? now : now + cold,
        busy: false, removed: false, batch: [], accruedTo: now, done: 0, cfs: { period: -1, used: 0 } };
      where.set(rep.id, gpu);
      f.replicas.push(rep);
      devices.place(rep, now);
      placedBySmShare[rep.smShare] = (placedBySmShare[rep.smShare] ?? 0) + 1;
      if (!warm) f.r.coldStarts++;
      heap.push({ t: rep.readyAt, fn: f, rep, ready: true });
    });
    f.desired = f.replicas.filter((r) => !r.removed).length;
  };

  /**
   * The gateway's wake: a request for a function at zero sets desired 1 and the provider starts a
   * replica with the defaults (a whole device, quota 1, until the autoscaler places it), cold
   * (`warm`: already up, SimFunction.warmAtStart).
   */
  const wake = (f: Fn, now: number, warm = false) =>
    actuate(f, { replicas: 1, quotas: [], add: [{ gpu: 'new:wake', smShare: 1, quota: 1, batchSize: 1 }], remove: [], weights: {}, reason: 'wake' }, now, warm);

  /** Counters of the interval just decided on start again. */
  const endInterval = (f: Fn) => {
    f.arrivals = f.completions = f.rejected = 0;
    f.area = 0;
    f.hist.fill(0);
    const kept = f.replicas.filter((r) => !r.removed);
    for (const r of kept) r.done = 0;
    f.r.maxReplicas = Math.max(f.r.maxReplicas, kept.length);
    if (f.r.series) {
      f.r.series.replicas.push(kept.length);
      f.r.series.share.push(kept.reduce((a, r) => a + r.smShare * r.quota, 0));
    }
  };

  // Deployment before the trace starts: the policy's first decision, ready at t = 0.
  for (const f of S) {
    if (f.sim.warmAtStart && f.sim.spec.minScale === 0) wake(f, 0, true);
    act(f, 0, true);
  }

  const pending: Array<[number, Fn]> = [];
  for (let k = 0; k < ticks; k++) {
    const t0 = k * tickS;
    const t1 = t0 + tickS;
    pending.length = 0;
    for (const f of S) {
      const i = Math.floor(t0 / f.sim.intervalS);
      const c = i < f.sim.counts.length ? f.sim.counts[i] : 0;
      const n = poisson(rand, (c / f.sim.intervalS) * tickS);
      for (let j = 0; j < n; j++) pending.push([t0 + rand() * tickS, f]);
      if (f.r.series) f.r.series.arrivals.push(n);
    }
    pending.sort((a, b) => a[0] - b[0]);
    let ai = 0;
    for (;;) {
      const ev = heap.peek();
      const ta = ai < pending.length ? pending[ai][0] : Infinity;
      if (ev && ev.t <= ta && ev.t < t1) {
        heap.pop();
        complete(ev);
        continue;
      }
      if (ai >= pending.length) break;
      const [t, f] = pending[ai++];
      f.queue.push(t);
      touch(f, t, 1);
      f.arrivals++;
      f.r.requests++;
      if (f.desired === 0 && !f.replicas.some((r) => !r.removed)) wake(f, t);
      for (const rep of f.replicas) {
        if (!rep.busy && !rep.removed && rep.readyAt <= t) {
          start(f, rep, t);
          break;
        }
      }
    }
    for (const f of S) act(f, t1, false);
  }
  // Drain: no more decisions; what is queued is served or times out.
  for (let ev = heap.pop(); ev; ev = heap.pop()) complete(ev);
  devices.advance(endT);
  let all: number[] = [];
  for (const f of S) {
    for (const rep of f.replicas) if (!rep.removed) accrue(f, rep, endT);
    const left = f.queue.length - f.qHead;
    f.r.dropped += left;
    f.r.violations += left;
    f.r.cost = f.r.gpuSeconds * price;
    const sorted = Float64Array.from(f.lat).sort();
    f.r.p50 = percentile(sorted, 50);
    f.r.p95 = percentile(sorted, 95);
    f.r.p99 = percentile(sorted, 99);
    if (all.length < 5e6) all = all.concat(f.lat);
  }
  const sorted = Float64Array.from(all).sort();
  const sum = (g: (r: FunctionResult) => number) => S.reduce((a, f) => a + g(f.r), 0);
  const requests = sum((r) => r.requests);
  const violations = sum((r) => r.violations);
  return {
    policy: o.policy,
    functions: S.map((f) => f.r),
    requests,
    violations,
    violationRate: requests ? violations / requests : 0,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    coldStarts: sum((r) => r.coldStarts),
    gpuSeconds: sum((r) => r.gpuSeconds),
    cost: sum((r) => r.cost),
    deviceSeconds: devices.seconds,
    peakDevices: devices.peak,
    deviceCost: devices.seconds * price,
    placedBySmShare,
    batches,
    oversubscribedBatches: oversubscribed,
    overCapacityBatches: overCapacity,
    decideMsPerTick: decideMs / (ticks + 1),
  };
}
