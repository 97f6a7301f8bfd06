/**
 * The authors' Gandiva baseline (`--schedule=gandiva --scheme=gandiva`): `gandiva_sim_jobs` of
 * `pkusys/ElasticFlow` `scheduler/scheduler.py`, re-implemented step by step (node sets,
 * packing, migration and time slicing in `gandiva-nodes.ts`). Each round:
 * 1. `gandiva_node_set_adjust`: the classes' node sets grow / shrink toward their share of the
 *    GPU demand, jobs re-spread over a class's sets (migration);
 * 2. `time_slicing_execute`: progress over the interval just ended, ends, rotation;
 * 3. the round's arrivals are placed (`gandiva_placement`: pack, new node set, or time-slice on
 *    an existing set); those that cannot be placed wait; a job counts as accepted when it is
 *    placed and is taken back if it ends after its deadline;
 * 4. when a node set was freed in step 2, the waiting jobs are tried again, in order, with the
 *    artifact's skip (it removes from the list it iterates, so the job after each started one is
 *    not tried this round);
 * 5. every running job (time-sliced ones too) is charged `estimate_overhead` at the next interval
 *    (only while start events remain); the next round is the next start event (merged within one
 *    slot), or one slot later when none is left.
 * Progress is in seconds against the trace's `duration` (the run time at the requested GPUs).
 */
import type { ClusterSpec } from '../../training/types';
import {
  type ArtifactBaselineJob,
  type ArtifactBaselineResult,
  durationOf,
  estimateOverhead,
  MAXSIZE,
  mergeStartEvents,
  resultOf,
  startEvents,
} from './baseline-loop-parts';
import { GandivaNodes, type GandivaJob } from './gandiva-nodes';

export interface GandivaRoundInfo {
  readonly time: number;
  readonly nodes: GandivaNodes;
  readonly pending: readonly string[];
  readonly ended: readonly GandivaJob[];
}

export interface GandivaOptions {
  /** Called after each round (for tests). */
  readonly onRound?: (r: GandivaRoundInfo) => void;
}

export function simulateArtifactGandiva(
  jobs: readonly ArtifactBaselineJob[],
  cluster: ClusterSpec,
  slot: number,
  opts: GandivaOptions = {},
): ArtifactBaselineResult {
  const numGpu = cluster.nodes * cluster.gpusPerNode;
  const nodes = new GandivaNodes(cluster.nodes, cluster.gpusPerNode, numGpu);
  const sorted = [...jobs].sort((a, b) => a.submitTime - b.submitTime);
  const judged = new Set(sorted.filter((s) => s.deadline !== undefined).map((s) => s.id));
  const events = startEvents(sorted);
  const running = new Set<GandivaJob>();
  const pending: GandivaJob[] = [];
  // `JOBS.runnable_jobs` here: every job that ever waited (never emptied in this loop)
  const everPending = new Set<GandivaJob>();
  let accepted = 0;
  let scheduleCount = 0;
  let cur = events.length ? events[0].time : 0;
  let timeDiff = 0;
  while (events.length + pending.length + running.size > 0) {
    nodes.adjust();
    const { ended, nodeRelease } = nodes.timeSlice(cur, timeDiff);
    for (const e of ended) {
      running.delete(e);
      if (e.endTime! > e.ddl) accepted--;
    }
    for (const r of everPending) r.overhead = 0;
    // the round's arrivals
    if (events.length && events[0].time === cur) {
      for (const s of events[0].startJobs) {
        const j: GandivaJob = { id: s.id, gpus: s.requestedGpus, duration: durationOf(s), ddl: s.deadline ?? MAXSIZE, executed: 0, overhead: 0 };
        if (nodes.place(j)) {
          running.add(j);
          if (judged.has(j.id)) accepted++;
        } else {
          pending.push(j);
          everPending.add(j);
        }
      }
      events.shift();
    }
    // waiting jobs, only after a node set was freed (Python's remove-while-iterating skip)
    if (nodeRelease) {
      for (let i = 0; i < pending.length; i++) {
        const p = pending[i];
        if (!nodes.place(p)) continue;
        pending.splice(i, 1);
        running.add(p);
        if (judged.has(p.id)) accepted++;
      }
    }
    opts.onRound?.({ time: cur, nodes, pending: pending.map((p) => p.id), ended });
    if (events.length === 0) {
      // nothing left can ever start: the artifact would step forever; stop
      if (running.size === 0) break;
      cur += slot;
      timeDiff = slot;
      continue;
    }
    const restart = scheduleCount > 0 && scheduleCount % slot === 0;
    scheduleCount++;
    for (const r of running) r.overhead = r.gpus > 0 ? estimateOverhead(r.gpus, numGpu, restart) : 0;
    mergeStartEvents(events, cur, slot);
    const next = events[0].time;
    timeDiff = Math.trunc(next - cur);
    cur = next;
  }
  return resultOf(jobs, accepted);
}
