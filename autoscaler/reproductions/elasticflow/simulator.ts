/**
 * The authors' ElasticFlow simulator loop (`pkusys/ElasticFlow`, `scheduler/scheduler.py`,
 * `ef_sim_jobs_access_control`; `jobs.py` `run_all_jobs`), re-implemented to check that our
 * `elasticflow` policy reproduces the artifact's numbers. It differs from `sim/training/engine.ts` where the
 * artifact does:
 * - events: one per distinct submit time; after each event, the next event closer than one slot is
 *   moved to `now + slot` and every event up to then is folded into it (unless it is the last);
 * - a job ends at its end event: its plan's slot-aligned end plus the overheads charged since
 *   (moved to the event where its work runs out, if earlier); progress stops at the planned
 *   (unaligned) end, and the work left then is forgiven;
 * - a deadline counts as met when the last plan's unaligned end (`real_end_time`) is ≤ the deadline,
 *   not by the time the work is done with overheads (`sim/training/engine.ts` counts that, the stricter test);
 * - a job is counted from its first start; a late one is declined at its end.
 * Placement (`placement.ts`) only matters through the overhead cache, as in the artifact.
 */
import { alignUp } from '../../training/free-gpu-timeline';
import { throughputAt } from '../../training/curve';
import type { AdmissionDecision, ClusterSpec, SchedulerState, TrainingJob, TrainingPolicy } from '../../training/types';
import { ArtifactCluster } from './placement';
import { overheadSeconds, type SimJob } from '../../sim/training/engine';

export interface ArtifactRunResult {
  readonly accepted: number;
  readonly declined: number;
  readonly ratio: number;
  /** Jobs the admission declined. */
  readonly admissionDeclined: number;
  /** Per job: admitted, met (artifact's test), real end, end event time. */
  readonly jobs: ReadonlyArray<{ id: string; admitted: boolean; met: boolean; realEnd?: number; endEvent?: number }>;
}

interface Ev {
  time: number;
  start: SimJob[];
  end: Run[];
}

interface Run {
  spec: SimJob;
  iterLeft: number;
  gpus: number;
  overhead: number;
  /** Slot-aligned planned end (+ overheads): the end event's time. */
  endTime: number;
  realEnd: number;
  /** Holds GPUs since the last event (only such a job ends at its end event). */
  placed: boolean;
  started: boolean;
  placement: readonly number[];
}

export function simulateArtifact(trace: readonly SimJob[], cluster: ClusterSpec, slot: number, policy: TrainingPolicy,
  opts: { until?: number } = {}): ArtifactRunResult {
  const cap = cluster.nodes * cluster.gpusPerNode;
  const events = new EventList();
  const find = (t: number) => events.at(t);
  for (const s of [...trace].sort((a, b) => a.submitTime - b.submitTime)) {
    const e = find(s.submitTime);
    if (e) e.start.push(s);
    else events.add({ time: s.submitTime, start: [s], end: [] });
  }
  const runnable: Run[] = [];
  const outcome = new Map<string, { admitted: boolean; met: boolean; realEnd?: number; endEvent?: number }>();
  const cache = new Set<string>();
  const phys = new ArtifactCluster(cluster);
  let accepted = 0;
  let admissionDeclined = 0;
  let count = 0;
  const moveEnd = (r: Run, oldEnd: number, newEnd: number) => {
    if (oldEnd === newEnd) return;
    const old = find(oldEnd);
    if (old) {
      const i = old.end.indexOf(r);
      if (i >= 0) old.end.splice(i, 1);
      if (old.end.length + old.start.length === 0) events.remove(old);
    }
    const e = find(newEnd);
    if (!e) events.add({ time: newEnd, start: [], end: [r] });
    else if (!e.end.includes(r)) e.end.push(r);
  };
  const toJob = (r: Run): TrainingJob => ({
    id: r.spec.id,
    model: r.spec.model,
    submitTime: r.spec.submitTime,
    iterations: r.spec.iterations,
    doneIterations: r.spec.iterations - r.iterLeft,
    deadline: r.spec.deadline,
    batchSize: r.spec.batchSize,
    maxGpus: policy.elasticMaxGpus ? r.spec.maxGpusElastic : r.spec.maxGpusBaseline,
    curve: r.spec.curve,
    currentGpus: r.gpus,
  });
  const state = (jobs: TrainingJob[]): SchedulerState => ({ cluster, slotSeconds: slot, jobs });
  let cur = events.length ? events.first.time : 0;
  let dt = 0;
  let guard = 0;
  while (events.length + runnable.length > 0 && guard++ < 5_000_000 && !(opts.until !== undefined && cur > opts.until)) {
    // progress of the interval just ended (`run_all_jobs`)
    for (const r of runnable) {
      if (r.gpus === 0) continue;
      const thr = throughputAt(r.spec.curve, r.gpus);
      let run = dt;
      if (cur > r.realEnd) run -= cur - r.realEnd;
      run = run < r.overhead ? 0 : run - r.overhead;
      const iterations = run * thr;
      if (r.iterLeft <= iterations && r.endTime > cur) {
        const old = r.endTime;
        r.endTime = cur;
        moveEnd(r, old, cur);
      }
      r.iterLeft -= iterations;
      r.overhead = 0;
    }
    const ev = find(cur);
    if (ev) events.remove(ev);
    if (ev) {
      for (const r of ev.end) {
        if (!r.placed || !runnable.includes(r)) continue;
        runnable.splice(runnable.indexOf(r), 1);
        phys.release(r.spec.id);
        const met = r.realEnd <= (r.spec.deadline ?? Infinity);
        if (!met && r.started) accepted--;
        outcome.set(r.spec.id, { admitted: true, met, realEnd: r.realEnd, endEvent: cur });
      }
      if (ev.start.length > 0) {
        const arrivals = ev.start.map((s): Run => ({ spec: s, iterLeft: s.iterations, gpus: 0, overhead: 0, endTime: 0, realEnd: 0, placed: false,
          started: false, placement: [] }));
        for (const [a, d] of admitEvent(policy, arrivals, runnable, toJob, state, cur)) {
          if (d.admitted) runnable.push(a);
          else {
            admissionDeclined++;
            outcome.set(a.spec.id, { admitted: false, met: false });
          }
        }
      }
    }
    // plan and allocate (`estimate_all_jobs`, which first releases every job's GPUs in deadline order, then `allocate_free_gpus`)
    runnable.sort((a, b) => (a.spec.deadline ?? 1e12) - (b.spec.deadline ?? 1e12));
    for (const r of runnable) phys.release(r.spec.id);
    const round = policy.allocation.allocate(state(runnable.map(toJob)), cur);
    const want: Record<string, number> = {};
    let nextChange = Infinity;
    for (const r of runnable) {
      const plan = round.plans?.[r.spec.id];
      r.gpus = round.gpus[r.spec.id] ?? 0;
      if (plan) {
        const old = r.endTime;
        r.realEnd = Math.ceil(plan.predictedCompletion);
        r.endTime = plan.reservedUntil ?? alignUp(cur, plan.predictedCompletion, slot);
        moveEnd(r, old, r.endTime);
        for (const s of plan.steps) if (s.from > cur) { nextChange = Math.min(nextChange, s.from); break; }
      } else {
        // no plan (a best-effort job): it ends when its work at this level runs out, on the grid
        const thr = throughputAt(r.spec.curve, r.gpus);
        const old = r.endTime;
        r.realEnd = thr > 0 ? cur + Math.ceil(r.iterLeft / thr) : Infinity;
        r.endTime = thr > 0 ? alignUp(cur, r.realEnd, slot) : Infinity;
        if (Number.isFinite(r.endTime)) moveEnd(r, old, r.endTime);
      }
      if (r.gpus > 0) {
        want[r.spec.id] = r.gpus;
        if (!r.started) {
          r.started = true;
          accepted++;
        }
      }
    }
    // the artifact's placement, in the round's final job order (every job was released above);
    // the artifact then keeps its job list sorted by GPUs, descending (stable), which orders the
    // overhead moves of end events below and the next event's ties
    const placement = phys.place(Object.entries(round.gpus));
    const rank = new Map(Object.keys(round.gpus).map((id, i) => [id, i]));
    runnable.sort((a, b) => b.gpus - a.gpus || (rank.get(a.spec.id) ?? Infinity) - (rank.get(b.spec.id) ?? Infinity));
    const inCache = new Set<Run>();
    for (const r of runnable) {
      r.placement = r.gpus > 0 ? placement.get(r.spec.id) ?? [] : [];
      // every event releases all jobs' GPUs before planning and places only those with GPUs now,
      // so at the next event only those can end (`'node_set' in e_job`)
      r.placed = r.gpus > 0;
      if (r.gpus === 0) continue;
      const key = [...r.placement].sort((a, b) => a - b).join(',');
      if (cache.has(key)) inCache.add(r);
      cache.add(key);
    }
    const next = round.nextDecisionAt ?? nextChange;
    if (Number.isFinite(next) && (events.length === 0 || next < events.first.time) && !find(next)) events.add({ time: next, start: [], end: [] });
    if (events.length === 0) {
      cur += 10;
      dt = 10;
      continue;
    }
    // overheads (`estimate_overhead`), charged to every job that holds GPUs; the cache is flushed
    // after the in-cache test on every slot-th event
    const restart = count > 0 && count % slot === 0;
    count++;
    if (restart) cache.clear();
    for (const r of runnable) {
      if (r.gpus === 0) {
        r.overhead = 0;
        continue;
      }
      r.overhead = overheadSeconds(r.gpus, cap, inCache.has(r), restart);
      const old = r.endTime;
      r.endTime += r.overhead;
      moveEnd(r, old, r.endTime);
    }
    // event merging
    events.mergeWithin(cur, slot);
    const from = ev ? ev.time : cur;
    dt = events.first.time - from;
    cur = events.first.time;
  }
  const jobs = trace.map((s) => ({ id: s.id, ...(outcome.get(s.id) ?? { admitted: true, met: false }) }));
  const withDeadline = trace.filter((s) => s.deadline !== undefined).length;
  return { accepted, declined: withDeadline - accepted, ratio: withDeadline ? accepted / withDeadline : 1, admissionDeclined, jobs };
}

/** The event's arrivals with their decisions: as a whole where the policy can, else one by one. */
function admitEvent(
  policy: TrainingPolicy,
  arrivals: Run[],
  runnable: Run[],
  toJob: (r: Run) => TrainingJob,
  state: (jobs: TrainingJob[]) => SchedulerState,
  now: number,
): Array<[Run, AdmissionDecision | { admitted: true }]> {
  const judged = arrivals.filter((a) => a.spec.deadline !== undefined);
  const out = new Map<Run, AdmissionDecision | { admitted: true }>();
  if (policy.admission?.admitEvent && judged.length) {
    const ds = policy.admission.admitEvent(judged.map(toJob), state(runnable.map(toJob)), now);
    judged.forEach((a, i) => out.set(a, ds[i]));
  } else if (policy.admission) {
    const admitted = runnable.map(toJob);
    for (const a of judged) {
      const d = policy.admission.admit(toJob(a), state(admitted), now);
      out.set(a, d);
      if (d.admitted) admitted.push(toJob(a));
    }
  }
  return arrivals.map((a) => [a, out.get(a) ?? { admitted: true }]);
}

/** The artifact's event list: sorted by time, one event per time. */
class EventList {
  private readonly list: Ev[] = [];
  private readonly index = new Map<number, Ev>();

  get length(): number {
    return this.list.length;
  }

  get first(): Ev {
    return this.list[0];
  }

  at(t: number): Ev | undefined {
    return this.index.get(t);
  }

  private position(t: number): number {
    let lo = 0;
    let hi = this.list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.list[mid].time < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  add(e: Ev): void {
    this.list.splice(this.position(e.time), 0, e);
    this.index.set(e.time, e);
  }

  remove(e: Ev): void {
    const i = this.position(e.time);
    if (this.list[i] === e) this.list.splice(i, 1);
    this.index.delete(e.time);
  }

  /**
   * After an event at `cur`: the next event closer than one slot moves to `cur + slot`, and every
   * later event up to then is folded into it (the last event left is never moved).
   */
  mergeWithin(cur: number, slot: number): void {
    const l = this.list;
    let nextTime = l[0].time;
    while (nextTime - cur <= slot && l.length > 1) {
      this.index.delete(l[0].time);
      l[0].time = cur + slot;
      this.index.set(l[0].time, l[0]);
      if (l[1].time - cur > slot) break;
      nextTime = l[1].time;
      l[0].start.push(...l[1].start);
      l[0].end.push(...l[1].end);
      this.index.delete(l[1].time);
      l.splice(1, 1);
      this.index.set(l[0].time, l[0]);
    }
  }
}
