/**
 * Event-driven training-cluster simulator following the ElasticFlow simulator's model
 * (`../shared/data/elasticflow/README.md`): integer seconds; decision points at arrivals,
 * completions and plan steps, never closer than one scheduling slot (events inside the slot are
 * merged onto `now + slot`); throughput is a table lookup; every running job pays the scaling /
 * restart overhead at every scheduling event (2 s, 7 s at ≥ 256 GPUs, if its exact GPU set was used
 * since the last cache flush; else that + 2·(log2 n + 1) s; every `slot`-th event +27 s (+20 s at
 * ≥ 256 GPUs) and the cache is flushed); no progress is made during the overhead.
 */
import { performance } from 'node:perf_hooks';
import { levelsOf, throughputAt } from '../../training/curve';
import { manageLoans } from '../../training/fapes/manager';
import type { ClusterSpec, Placement, ScalingCurve, SchedulerState, TrainingJob, TrainingPolicy } from '../../training/types';

/** A job as the simulator feeds it: fixed curve, and optionally an adaptive one (batch co-adaptation). */
export interface SimJob {
  readonly id: string;
  readonly model: string;
  readonly submitTime: number;
  readonly iterations: number;
  readonly deadline?: number;
  readonly batchSize: number;
  readonly requestedGpus: number;
  /** Curve at the submitted batch size. */
  readonly curve: ScalingCurve;
  /** Curve with the batch co-adapted (used by policies with `adaptsBatch`). */
  readonly adaptiveCurve?: ScalingCurve;
  /** max_gpu for ElasticFlow-family policies and for the rest. */
  readonly maxGpusElastic: number;
  readonly maxGpusBaseline: number;
  readonly gradientNoiseScale?: number;
}

export interface SimConfig {
  readonly cluster: ClusterSpec;
  readonly slotSeconds: number;
  readonly policy: TrainingPolicy;
  /** 'elasticflow' (default) charges the artifact's overheads; 'none' charges nothing. */
  readonly overhead?: 'elasticflow' | 'none';
  /** Stop after this simulated time (s); unfinished jobs count as missed. */
  readonly until?: number;
  /**
   * An inference virtual cluster inside `cluster`: its servers serve `demandAt(t)` servers of
   * inference; with `loaning` the idle ones are loaned to training and reclaimed by FaPES-Manager
   * (`fapes/manager.ts`). Decisions then happen every slot (FaPES rounds).
   */
  readonly inference?: InferenceVC;
}

export interface InferenceVC {
  /** Node ids (0-based) of the inference VC; the other nodes are the training VC. */
  readonly servers: readonly number[];
  /** Inference servers needed at time t (s). */
  readonly demandAt: (t: number) => number;
  readonly loaning: boolean;
}

/** GPU-time accounting of a run (GPU-seconds over [first arrival, makespan]). */
export interface Utilisation {
  readonly spanSeconds: number;
  readonly capacityGpuSeconds: number;
  readonly trainingGpuSeconds: number;
  readonly inferenceGpuSeconds: number;
  readonly loanedGpuSeconds: number;
  readonly reclaims: number;
  readonly preemptions: number;
}

export interface JobOutcome {
  readonly id: string;
  readonly submitTime: number;
  readonly deadline?: number;
  readonly admitted: boolean;
  readonly startTime?: number;
  readonly endTime?: number;
  readonly metDeadline: boolean;
  readonly gpuSeconds: number;
  readonly reason?: string;
}

export interface SimResult {
  readonly policy: string;
  readonly jobs: JobOutcome[];
  /** Deadline jobs finished by their deadline. */
  readonly accepted: number;
  /** Deadline jobs dropped, late, or unfinished. */
  readonly declined: number;
  /** accepted / (accepted + declined). */
  readonly ratio: number;
  /** Milliseconds per decision round (admission + allocation + placement). */
  readonly decisionMs: number[];
  readonly rounds: number;
  /** Last completion time (s). */
  readonly makespan: number;
  readonly utilisation: Utilisation;
}

interface Live {
  spec: SimJob;
  done: number;
  gpus: number;
  placement: readonly number[];
  attained: number;
  waiting: number;
  start?: number;
  overhead: number;
  /** Preempted by a reclaim since the last event: it restarts from a checkpoint. */
  preempted?: boolean;
}

function toJob(l: Live, policy: TrainingPolicy): TrainingJob {
  const s = l.spec;
  const adaptive = policy.adaptsBatch && s.adaptiveCurve;
  return {
    id: s.id,
    model: s.model,
    submitTime: s.submitTime,
    iterations: s.iterations,
    doneIterations: l.done,
    deadline: s.deadline,
    batchSize: s.batchSize,
    requestedGpus: s.requestedGpus,
    maxGpus: policy.elasticMaxGpus ? s.maxGpusElastic : s.maxGpusBaseline,
    curve: adaptive ? s.adaptiveCurve! : s.curve,
    currentGpus: l.gpus,
    attainedGpuSeconds: l.attained,
    waitingRounds: l.waiting,
    gradientNoiseScale: s.gradientNoiseScale,
  };
}

/** Overhead of one job at one event (s), per `utils.estimate_overhead`. */
export function overheadSeconds(gpus: number, totalGpus: number, inCache: boolean, restart: boolean): number {
  let o = totalGpus >= 256 ? 7 : 2;
  if (inCache) return o;
  if (restart) o += totalGpus >= 256 ? 47 : 27;
  return o + 2 * (Math.log2(gpus) + 1);
}

export function simulate(trace: readonly SimJob[], cfg: SimConfig): SimResult {
  const { cluster, slotSeconds: slot, policy } = cfg;
  const gpn = cluster.gpusPerNode;
  const total = cluster.nodes * gpn;
  const inf = cfg.inference;
  const infSet = new Set(inf?.servers ?? []);
  const trainingNodes = [...Array(cluster.nodes).keys()].filter((n) => !infSet.has(n));
  let loaned: number[] = [];
  let view: number[] = trainingNodes; // view node i = physical node view[i]
  let viewCluster: ClusterSpec = inf ? { ...cluster, nodes: view.length } : cluster;
  const toView = (g: number) => view.indexOf(Math.floor(g / gpn)) * gpn + (g % gpn);
  const toPhys = (g: number) => view[Math.floor(g / gpn)] * gpn + (g % gpn);
  let infGpuS = 0;
  let loanGpuS = 0;
  let reclaims = 0;
  let preemptions = 0;
  const arrivals = [...trace].sort((a, b) => a.submitTime - b.submitTime);
  const outcomes = new Map<string, JobOutcome>();
  const live = new Map<string, Live>();
  const decisionMs: number[] = [];
  const cache = new Set<string>();
  let next = 0;
  let events = 0;
  let makespan = 0;
  let t = arrivals.length ? arrivals[0].submitTime : 0;
  let nextHint: number | undefined;
  let idle = 0;
  const finish = (l: Live, end: number | undefined, reason?: string) => {
    const s = l.spec;
    const met = end !== undefined && s.deadline !== undefined && end <= s.deadline;
    outcomes.set(s.id, { id: s.id, submitTime: s.submitTime, deadline: s.deadline, admitted: true, startTime: l.start, endTime: end, metDeadline: met,
      gpuSeconds: l.attained, reason });
    live.delete(s.id);
    if (end !== undefined) makespan = Math.max(makespan, end);
  };
  const stateOf = (): SchedulerState => ({ cluster: viewCluster, slotSeconds: slot, jobs: [...live.values()].map((l) => toJob(l, policy)) });

  while (next < arrivals.length || live.size > 0) {
    if (cfg.until !== undefined && t > cfg.until) break;
    const t0 = performance.now();
    // 0. FaPES-Manager: loan idle inference servers, reclaim on demand (preempting training jobs)
    let demand = 0;
    if (inf) {
      demand = Math.min(inf.servers.length, Math.max(0, inf.demandAt(t)));
      const onServer = (n: number) => [...live.values()].filter((l) => l.placement.some((g) => Math.floor(g / gpn) === n)).map((l) => l.spec.id);
      const m = manageLoans({ inferenceServers: inf.servers, loaning: inf.loaning }, loaned, demand, onServer);
      reclaims += m.reclaim.length;
      for (const id of m.preempted) {
        const l = live.get(id)!;
        l.gpus = 0;
        l.placement = [];
        l.preempted = true;
        preemptions++;
      }
      loaned = m.loaned;
      view = [...trainingNodes, ...loaned].sort((a, b) => a - b);
      viewCluster = { ...cluster, nodes: view.length };
    }
    const viewTotal = viewCluster.nodes * gpn;
    // 1. arrivals up to now: one event, judged as a whole by policies with `admitEvent`, else one at a time
    const event: Live[] = [];
    while (next < arrivals.length && arrivals[next].submitTime <= t) {
      const spec = arrivals[next++];
      const l: Live = { spec, done: 0, gpus: 0, placement: [], attained: 0, waiting: 0, overhead: 0 };
      if (levelsOf(toJob(l, policy), total).length === 0) {
        outcomes.set(spec.id, { id: spec.id, submitTime: spec.submitTime, deadline: spec.deadline, admitted: false, metDeadline: false, gpuSeconds: 0,
          reason: 'cannot run on this cluster' });
        continue;
      }
      event.push(l);
    }
    const decline = (spec: SimJob, reason: string) =>
      outcomes.set(spec.id, { id: spec.id, submitTime: spec.submitTime, deadline: spec.deadline, admitted: false, metDeadline: false, gpuSeconds: 0, reason });
    const judged = policy.admission ? event.filter((l) => l.spec.deadline !== undefined) : [];
    const verdict = new Map<Live, { admitted: boolean; reason: string }>();
    if (policy.admission?.admitEvent && judged.length > 0) {
      const decisions = policy.admission.admitEvent(judged.map((l) => toJob(l, policy)), stateOf(), t);
      judged.forEach((l, i) => verdict.set(l, decisions[i]));
    }
    for (const l of event) {
      const d = verdict.get(l) ?? (judged.includes(l) ? policy.admission!.admit(toJob(l, policy), stateOf(), t) : undefined);
      if (d && !d.admitted) decline(l.spec, d.reason);
      else live.set(l.spec.id, l);
    }
    // 2. allocation and placement
    const state = stateOf();
    const decision = policy.allocation.allocate(state, t);
    const want: Record<string, number> = {};
    let used = 0;
    for (const j of state.jobs) {
      const g = decision.gpus[j.id] ?? 0;
      if (g <= 0) continue;
      if (throughputAt(j.curve, g) <= 0 || g > j.maxGpus) throw new Error(`${policy.name} gave job ${j.id} an unusable ${g} GPUs`);
      want[j.id] = g;
      used += g;
    }
    if (used > viewTotal) throw new Error(`${policy.name} allocated ${used} > ${viewTotal} GPUs at t=${t}`);
    const previous: Record<string, readonly number[]> = {};
    for (const l of live.values()) if (l.gpus > 0) previous[l.spec.id] = inf ? l.placement.map(toView) : l.placement;
    let placement: Placement = policy.placement.place(want, viewCluster, previous);
    if (inf) placement = Object.fromEntries(Object.entries(placement).map(([id, gs]) => [id, gs.map(toPhys)]));
    decisionMs.push(performance.now() - t0);
    nextHint = decision.nextDecisionAt;
    // 3. overheads (authors' rule; the cache is keyed by the exact GPU set)
    const restart = events > 0 && events % slot === 0;
    events++;
    for (const l of live.values()) {
      const g = want[l.spec.id] ?? 0;
      l.gpus = g;
      l.placement = g > 0 ? placement[l.spec.id] : [];
      l.overhead = 0;
      if (g > 0) {
        if (l.start === undefined) l.start = t;
        if (cfg.overhead !== 'none') {
          const key = [...l.placement].sort((a, b) => a - b).join(',');
          l.overhead = overheadSeconds(g, total, cache.has(key) && !l.preempted, restart || l.preempted === true);
          cache.add(key);
        }
      }
      l.preempted = false;
    }
    if (restart) cache.clear();
    // 4. next decision point: first arrival, completion or plan step, at least one slot away
    let tn = next < arrivals.length ? arrivals[next].submitTime : Infinity;
    for (const l of live.values()) {
      if (l.gpus === 0) continue;
      const rate = throughputAt(toCurve(l, policy), l.gpus);
      tn = Math.min(tn, t + l.overhead + Math.ceil((l.spec.iterations - l.done) / rate));
    }
    if (nextHint !== undefined && nextHint > t) tn = Math.min(tn, nextHint);
    if (tn === Infinity) {
      if (live.size === 0) break;
      if (++idle > 10000) break; // nothing runs and nothing will arrive: the rest never finishes
      tn = t + slot;
    } else idle = 0;
    if (inf) tn = Math.min(tn, t + slot);
    tn = Math.max(tn, t + slot);
    infGpuS += demand * gpn * (tn - t);
    loanGpuS += loaned.length * gpn * (tn - t);
    // 5. progress until tn
    for (const l of [...live.values()]) {
      if (l.gpus === 0) {
        l.waiting++;
        continue;
      }
      l.waiting = 0;
      const rate = throughputAt(toCurve(l, policy), l.gpus);
      const run = Math.max(0, tn - t - l.overhead);
      const left = l.spec.iterations - l.done;
      if (run * rate >= left) {
        const end = t + l.overhead + Math.ceil(left / rate);
        l.attained += l.gpus * (end - t);
        l.done = l.spec.iterations;
        finish(l, end);
      } else {
        l.done += run * rate;
        l.attained += l.gpus * (tn - t);
      }
    }
    // Jobs that can never finish any more (deadline jobs long past, nothing running) stay until `until`.
    t = tn;
  }
  for (const l of [...live.values()]) finish(l, undefined, 'unfinished');
  const jobs = trace.map((s) => outcomes.get(s.id)!);
  const withDeadline = jobs.filter((j) => j.deadline !== undefined);
  const accepted = withDeadline.filter((j) => j.metDeadline).length;
  const first = arrivals.length ? arrivals[0].submitTime : 0;
  const span = Math.max(0, makespan - first);
  return {
    policy: policy.name,
    jobs,
    accepted,
    declined: withDeadline.length - accepted,
    ratio: withDeadline.length ? accepted / withDeadline.length : 1,
    decisionMs,
    rounds: events,
    makespan,
    utilisation: {
      spanSeconds: span,
      capacityGpuSeconds: total * span,
      trainingGpuSeconds: jobs.reduce((a, j) => a + j.gpuSeconds, 0),
      inferenceGpuSeconds: infGpuS,
      loanedGpuSeconds: loanGpuS,
      reclaims,
      preemptions,
    },
  };
}

function toCurve(l: Live, policy: TrainingPolicy): ScalingCurve {
  return policy.adaptsBatch && l.spec.adaptiveCurve ? l.spec.adaptiveCurve : l.spec.curve;
}
