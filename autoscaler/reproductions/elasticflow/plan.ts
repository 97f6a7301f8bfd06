/**
 * ElasticFlow's planner as the authors' artifact computes it (`pkusys/ElasticFlow`,
 * `scheduler/scheduler.py`, `ef_sim_allocation`), re-implemented step for step so that our
 * `elasticflow` policy reproduces the artifact's numbers, quirks included:
 * - the board is a map time → free GPUs whose keys are only the times where the free count
 *   changes (`merge_dict` drops a key whose value equals the previous one), plus the job's
 *   deadline aligned up to the slot grid;
 * - the minimum satisfactory share is searched level by level from 1 GPU; for each level the
 *   board's periods are walked backwards from the deadline, and the job takes the level from the
 *   first period start (walking back) where the work fits, the level below before it — a
 *   period boundary, not a slot inside the period;
 * - the period ending at the aligned deadline counts up to the true deadline;
 * - a job no level can satisfy takes the top level it tried up to its deadline and then whatever
 *   fits, and is reported as failing (`ok: false`);
 * - plans end at `realEnd` = ⌈start of its last step + work left ÷ throughput⌉ and hold their
 *   GPUs until `end`, that rounded up to the slot grid.
 * Maps keep insertion order as Python dicts do; where the artifact sorts, we sort. A few of the
 * artifact's idiosyncrasies (a function-wide `last_event_gpu` reused across branches, loops over
 * the old board where the new one has an extra key) are kept on purpose and marked "as the artifact".
 */
import type { Seconds } from '../../training/types';

/** time → free GPUs, in insertion order (a Python dict). */
export type FreeMap = Map<number, number>;
/** time → GPUs of one job from that time on. */
export type AllocMap = Map<number, number>;

/** What the planner needs of a job. */
export interface ArtifactJob {
  /** Iterations left (> 0). */
  readonly iterLeft: number;
  /** Absolute deadline (s). */
  readonly ddl: Seconds;
  /** Table columns the job may use (≤ its max_gpu), ascending. */
  readonly levels: readonly number[];
  /** max_gpu. */
  readonly maxGpu: number;
  /** Iterations per second at a level. */
  thr(gpus: number): number;
}

export interface ArtifactPlan {
  /** GPUs per time (merged). */
  readonly allocations: AllocMap;
  /** Completion rounded up to the slot grid: the plan holds its GPUs until then. */
  readonly end: Seconds;
  /** Completion (whole seconds). */
  readonly realEnd: Seconds;
  /** The board after this plan is reserved (merged). */
  readonly board: FreeMap;
  /** GPU-seconds of the plan up to `end` before merging (the artifact's `get_allocation_time`). */
  readonly gpuTime: number;
  /** realEnd ≤ deadline. */
  readonly ok: boolean;
}

/** Python's `align_to_time_slot` (floor division and a non-negative remainder). */
export function alignToSlot(start: number, t: number, slot: number): number {
  const d = t - start;
  let n = Math.floor(d / slot);
  if (d - n * slot > 0) n += 1;
  return start + n * slot;
}

/** Python's `merge_dict`: drops every key whose value equals the previous key's. */
export function mergeMap(m: ReadonlyMap<number, number>): Map<number, number> {
  const out = new Map<number, number>();
  let last = -1;
  for (const [k, v] of m) {
    if (v === last) continue;
    out.set(k, v);
    last = v;
  }
  return out;
}

/** The map with its keys in ascending order (the map itself when they already are). */
export function sortedMap(m: Map<number, number>): Map<number, number> {
  let last = -Infinity;
  let sorted = true;
  for (const k of m.keys()) {
    if (k < last) {
      sorted = false;
      break;
    }
    last = k;
  }
  return sorted ? m : new Map([...m.entries()].sort((a, b) => a[0] - b[0]));
}

/** `get_allocation_time`: GPU-seconds of an allocation map until `end`. */
export function allocationTime(a: ReadonlyMap<number, number>, end: number): number {
  let lastT: number | undefined;
  let lastG = 0;
  let total = 0;
  for (const [t, g] of a) {
    if (lastT !== undefined) total += lastG * (t - lastT);
    lastT = t;
    lastG = g;
  }
  return lastT === undefined ? 0 : total + lastG * (end - lastT);
}

/** `get_next_level`: the level after `g` (the first level for 0), or `g` at the top. */
export function nextLevelOf(job: ArtifactJob, g: number): number {
  if (g === 0) return job.levels[0] ?? 0;
  for (const l of job.levels) if (l > g) return l;
  return g;
}

/** `get_last_level(gpu_num = n)`: the largest level < n, or 0. */
function lastLevelBelow(job: ArtifactJob, n: number): number {
  let best = 0;
  for (const l of job.levels) {
    if (l >= n) break;
    best = l;
  }
  return best;
}

const fits = (job: ArtifactJob, free: number) => lastLevelBelow(job, 1 + free);

/**
 * `ef_sim_allocation`: the job's plan from `start` on the board `future` (not modified), with its
 * deadline. With `assigned`, the job holds exactly that many GPUs from `start` to the board's next
 * change and is planned normally from there (the artifact's marginal-GPU-time probe).
 */
export function planJob(job: ArtifactJob, start: number, future: ReadonlyMap<number, number>, slot: number, cap: number, assigned?: number): ArtifactPlan {
  const ddl = job.ddl;
  let eventTime = start;
  let iterLeft = job.iterLeft;
  let alloc: AllocMap = new Map([[eventTime, 0]]);
  let nf: FreeMap = new Map(future);
  let lastEventGpu = 0; // one variable for the whole function, as the artifact
  const alignedDdl = alignToSlot(start, ddl, slot);
  const done = (end: number, realEnd: number): ArtifactPlan => ({
    allocations: mergeMap(alloc),
    end,
    realEnd,
    board: mergeMap(nf),
    gpuTime: allocationTime(alloc, end),
    ok: realEnd <= ddl,
  });
  if (!nf.has(alignedDdl) && alignedDdl >= start) {
    for (const [t, f] of nf) {
      if (t < alignedDdl) lastEventGpu = f;
      else break;
    }
    nf.set(alignedDdl, lastEventGpu);
    nf = sortedMap(nf);
  }

  if (assigned !== undefined) {
    const quota = assigned;
    let available = nf.get(start) ?? 0;
    let futureEvent = alignedDdl;
    let found = false;
    for (const [t, f] of future) {
      if (t < eventTime) {
        available = f;
        nf.delete(t);
        continue;
      }
      if (t === eventTime) {
        available = f;
        continue;
      }
      futureEvent = t;
      found = true;
      break;
    }
    if (!found) futureEvent = alignedDdl;
    alloc.set(eventTime, quota);
    const realEnd = Math.ceil(eventTime + iterLeft / job.thr(quota));
    const end = alignToSlot(start, realEnd, slot);
    if (futureEvent >= end && ddl >= realEnd) {
      for (const t of future.keys()) {
        if (t < eventTime) continue;
        if (t < end) {
          lastEventGpu = nf.get(t)!;
          nf.set(t, nf.get(t)! - quota);
        }
      }
      if (eventTime !== end) nf.set(eventTime, available - quota);
      if (!future.has(end)) nf.set(end, lastEventGpu);
      nf = sortedMap(nf);
      return done(end, realEnd);
    }
    const duration = futureEvent === alignedDdl ? ddl - eventTime : futureEvent - eventTime;
    iterLeft -= duration * job.thr(quota);
    if (nf.has(eventTime)) nf.set(eventTime, nf.get(eventTime)! - quota);
    else nf.set(eventTime, lastEventGpu - quota);
    eventTime = futureEvent;
    alloc.set(eventTime, 0);
  }

  // Minimum satisfactory share: levels from the smallest up.
  let quota = nextLevelOf(job, 0);
  let lastQuota = 0;
  let lastLastQuota = 0;
  let point = start - 1;
  while (quota > 0 && quota <= cap && quota <= job.maxGpu) {
    let periodEnd = alignedDdl;
    let tmpIters = 0;
    for (const ps of nf.keys()) if (ps < alignedDdl && !alloc.has(ps)) alloc.set(ps, 0);
    const keys = [...nf.keys()];
    for (let i = keys.length - 1; i >= 0; i--) {
      const ps = keys[i];
      if (ps >= alignedDdl) continue;
      if (ps < eventTime) break;
      let a = quota;
      if (nf.get(ps)! < quota) a = Math.min(quota, fits(job, nf.get(ps)!));
      if (a === 0) {
        periodEnd = ps;
        continue;
      }
      const duration = periodEnd === alignedDdl ? ddl - ps : periodEnd - ps;
      tmpIters += duration * job.thr(a);
      if (tmpIters >= iterLeft) {
        point = ps;
        return forward(quota, lastQuota, point);
      }
      periodEnd = ps;
    }
    lastLastQuota = lastQuota;
    lastQuota = quota;
    quota = nextLevelOf(job, quota);
    if (quota === lastQuota) break;
  }

  // No level meets the deadline: the top level tried up to it, then whatever fits.
  {
    let lastT: number | undefined;
    let lastA = 0;
    const levelAt = (t: number) => Math.min(t >= point ? lastQuota : lastLastQuota, fits(job, nf.get(t)!));
    for (const t of [...nf.keys()]) {
      if (t > alignedDdl) break;
      if (t < eventTime) continue;
      if (lastT === undefined) {
        lastT = t;
        lastA = levelAt(t);
        continue;
      }
      alloc.set(lastT, lastA);
      nf.set(lastT, nf.get(lastT)! - lastA);
      if (lastA === 0) {
        lastT = t;
        lastA = levelAt(t);
        continue;
      }
      const duration = t === alignedDdl ? ddl - lastT : t - lastT;
      iterLeft -= duration * job.thr(lastA);
      lastT = t;
      lastA = Math.min(lastQuota, fits(job, nf.get(t)!));
    }
  }
  let lastT = Math.max(alignedDdl, eventTime);
  for (const t of [...nf.keys()]) {
    if (t <= alignedDdl) continue;
    const q = Math.min(fits(job, nf.get(lastT) ?? 0), job.maxGpu);
    if (q === 0) {
      alloc.set(lastT, 0);
      lastT = t;
      continue;
    }
    alloc.set(lastT, q);
    const iterations = (t - lastT) * job.thr(q);
    if (iterations >= iterLeft) {
      const realEnd = Math.ceil(lastT + iterLeft / job.thr(q));
      const end = alignToSlot(start, realEnd, slot);
      for (const t1 of [...nf.keys()]) {
        if (t1 < alignedDdl) continue;
        if (t1 < end && future.has(t1)) lastEventGpu = future.get(t1)!;
        if (t1 >= lastT && t1 < end) nf.set(t1, nf.get(t1)! - q);
      }
      if (lastT !== end) nf.set(lastT, lastEventGpu - q);
      if (!future.has(end)) nf.set(end, lastEventGpu);
      nf = sortedMap(nf);
      return done(end, realEnd);
    }
    iterLeft -= iterations;
    for (const t1 of future.keys()) if (t1 < lastT) lastEventGpu = nf.get(t1) ?? lastEventGpu;
    for (const t1 of [...nf.keys()]) if (t1 >= lastT && t1 < t) nf.set(t1, nf.get(t1)! - q);
    lastT = t;
  }
  const q = assigned ?? Math.min(cap, job.maxGpu);
  alloc.set(lastT, q);
  alloc = sortedMap(alloc);
  const realEnd = Math.ceil(lastT + iterLeft / job.thr(q));
  const end = alignToSlot(start, realEnd, slot);
  nf.set(lastT, cap - q);
  nf.set(end, cap);
  nf = sortedMap(nf);
  return done(end, realEnd);

  /** The share found: `lastQuota` before `point`, `quota` from it, period by period. */
  function forward(quota: number, lastQuota: number, point: number): ArtifactPlan {
    let lastT: number | undefined;
    let lastA = 0;
    let end: number | undefined;
    let realEnd = 0;
    const levelAt = (t: number) => Math.min(t >= point ? quota : lastQuota, fits(job, nf.get(t)!));
    for (const t of [...nf.keys()]) {
      if (t > alignedDdl) break;
      if (t < eventTime) continue;
      if (lastT === undefined) {
        lastT = t;
        lastA = levelAt(t);
        continue;
      }
      alloc.set(lastT, lastA);
      nf.set(lastT, nf.get(lastT)! - lastA);
      if (lastA === 0) {
        lastT = t;
        lastA = levelAt(t);
        continue;
      }
      const duration = t === alignedDdl ? ddl - lastT : t - lastT;
      const iterations = duration * job.thr(lastA);
      if (lastT < point) iterLeft -= iterations;
      else if (iterations < iterLeft) iterLeft -= iterations;
      else {
        const realLeft = Math.ceil(iterLeft / job.thr(alloc.get(lastT)!));
        end = lastT + alignToSlot(0, realLeft, slot);
        realEnd = lastT + realLeft;
        break;
      }
      lastT = t;
      lastA = levelAt(t);
    }
    if (end === undefined) {
      alloc.set(lastT!, lastA);
      nf.set(lastT!, nf.get(lastT!)! - lastA);
      const realLeft = Math.ceil(iterLeft / job.thr(alloc.get(lastT!)!));
      realEnd = lastT! + realLeft;
      end = lastT! + alignToSlot(0, realLeft, slot);
    }
    alloc = sortedMap(alloc);
    lastEventGpu = cap;
    for (const [t, f] of future) {
      if (t < eventTime) continue;
      if (t < end) lastEventGpu = f;
    }
    if (!future.has(end)) nf.set(end, lastEventGpu);
    nf = sortedMap(nf);
    return done(end, realEnd);
  }
}
