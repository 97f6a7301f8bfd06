import { book, fragmentation, rename, unbook, type ClusterState, type SchedInstance } from '../../reproductions/dilu/cluster';
import type { Placement } from '../../reproductions/dilu/select';
import type { SchedEvent } from './events';

/**
 * Dilu's scheduling simulator (ASPLOS'25 artifact, the `__main__` of each
 * `scheduling/simulations/baseline/scheduler_*.py`): replays start/delete events in order; a
 * start asks the policy where to place the instance, a delete frees its GPUs. After every event
 * the number of active GPUs is sampled. Peak = the largest sample; time-weighted average = each
 * sample held until the next one's time, over the first to the last event; fragmentation is taken
 * when the peak is first reached.
 *
 * Policies of ours may also move instances (`rebalance`): a move books the new place at once and
 * frees the old one only `durationS` later (the new replica's cold start, or a training job's
 * checkpoint and resume), so both count while it lasts. Every move is counted.
 */

/** A move: the instance's new place, booked now, the old one freed after `durationS`. */
export interface Move {
  readonly name: string;
  readonly placement: Placement;
  readonly durationS: number;
}

export interface SchedPolicy {
  readonly name: string;
  readonly cluster: ClusterState;
  place(c: ClusterState, inst: SchedInstance): Placement | null;
  /** Moves to start after an event at `nowS`; `moving` holds the instances whose move is under way. */
  rebalance?(c: ClusterState, nowS: number, moving: ReadonlySet<string>): Move[];
}

export interface SchedResult {
  readonly policy: string;
  readonly starts: number;
  readonly peak: number;
  /** Time-weighted mean of active GPUs over the trace. */
  readonly timeAvg: number;
  /** Mean over active GPUs of 1 − Σrequest and 1 − memory/total, when the peak is first reached. */
  readonly fragAtPeak: { readonly sm: number; readonly mem: number };
  /** Start events the policy could not place. */
  readonly failures: number;
  readonly moves: number;
  readonly movesPerHour: number;
  /** Seconds from the first to the last event. */
  readonly spanS: number;
  /** Moves by instance type. */
  readonly movesByType: Readonly<Record<string, number>>;
}

const MOVING = '\u0000moving';

export function simulate(events: readonly SchedEvent[], policy: SchedPolicy): SchedResult {
  const c = policy.cluster;
  const pending: { name: string; until: number }[] = [];
  const moving = new Set<string>();
  const movesByType: Record<string, number> = {};
  let starts = 0;
  let failures = 0;
  let moves = 0;
  let peak = -1;
  let fragAtPeak = { sm: 0, mem: 0 };
  let area = 0;
  let last: { t: number; n: number } | undefined;
  const sample = (t: number) => {
    const n = c.active.length;
    if (last) area += last.n * (t - last.t);
    last = { t, n };
    if (n > peak) {
      peak = n;
      fragAtPeak = fragmentation(c);
    }
  };
  const finishMoves = (upTo: number) => {
    pending.sort((a, b) => a.until - b.until);
    while (pending.length && pending[0].until <= upTo) {
      const m = pending.shift()!;
      moving.delete(m.name);
      unbook(c, m.name);
      rename(c, m.name + MOVING, m.name);
      sample(m.until);
    }
  };
  for (const e of events) {
    finishMoves(e.t);
    if (e.action === 'start') {
      starts++;
      const p = policy.place(c, e.inst);
      if (p) book(c, e.inst, p.parts, p.release);
      else failures++;
    } else {
      if (moving.delete(e.inst.name)) {
        pending.splice(pending.findIndex((m) => m.name === e.inst.name), 1);
        unbook(c, e.inst.name + MOVING);
      }
      unbook(c, e.inst.name);
    }
    for (const m of policy.rebalance?.(c, e.t, moving) ?? []) {
      const placed = c.placed.get(m.name);
      if (!placed || moving.has(m.name)) throw new Error(`move of ${m.name}: not placed or already moving`);
      book(c, { ...placed.inst, name: m.name + MOVING }, m.placement.parts, m.placement.release);
      moving.add(m.name);
      pending.push({ name: m.name, until: e.t + m.durationS });
      moves++;
      movesByType[placed.inst.type] = (movesByType[placed.inst.type] ?? 0) + 1;
    }
    sample(e.t);
  }
  const spanS = events.length ? events[events.length - 1].t - events[0].t : 0;
  return {
    policy: policy.name,
    starts,
    peak: Math.max(0, peak),
    timeAvg: spanS > 0 ? area / spanS : c.active.length,
    fragAtPeak,
    failures,
    moves,
    movesPerHour: spanS > 0 ? (moves * 3600) / spanS : 0,
    spanS,
    movesByType,
  };
}
