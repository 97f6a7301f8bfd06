/**
 * The node sets of the authors' Gandiva baseline (`pkusys/ElasticFlow` `scheduler/cluster.py`,
 * `--scheme=gandiva`): `gandiva_placement`, `gandiva_node_set_adjust` / `_expand` / `_shrink`
 * (migration: jobs are re-spread over a job-size class's node sets) and `time_slicing_execute`,
 * re-implemented step by step. Every model's `mem_util` is 1 in the artifact (`models.py`), so a
 * node set's `util` counts the jobs put on it; it is never lowered when a job ends (only reset
 * when the class is re-spread), and node sets are kept sorted by that stale value. Which physical
 * nodes a set holds never matters in simulation, so free nodes are a count.
 */

/** The job-size classes of `CLUSTER.node_g`, in the dict's order. */
export const GANDIVA_CLASSES = [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 88, 128, 256] as const;

export interface GandivaJob {
  readonly id: string;
  readonly gpus: number;
  readonly duration: number;
  readonly ddl: number;
  executed: number;
  overhead: number;
  endTime?: number;
}

export interface NodeSet {
  nodes: number;
  capacity: number;
  util: number;
  jobs: GandivaJob[];
}

export interface SliceOutcome {
  readonly ended: GandivaJob[];
  readonly nodeRelease: boolean;
}

export class GandivaNodes {
  freeNodes: number;
  readonly classes = new Map<number, NodeSet[]>(GANDIVA_CLASSES.map((g) => [g, []]));

  constructor(
    nodes: number,
    private readonly gpn: number,
    private readonly numGpu: number,
  ) {
    this.freeNodes = nodes;
  }

  private listOf(gpus: number): NodeSet[] {
    const list = this.classes.get(gpus);
    // the artifact prints "error: job needs n GPUs" and exits
    if (!list) throw new Error(`gandiva: no node-set class for a ${gpus}-GPU job`);
    return list;
  }

  private newSet(gpus: number): NodeSet {
    const nodes = Math.ceil(gpus / this.gpn);
    this.freeNodes -= nodes;
    return { nodes, capacity: Math.trunc((nodes * this.gpn) / gpus), util: 0, jobs: [] };
  }

  /** `gandiva_placement`: pack into the least-`util` set of the class, else a new set, else time-slice. */
  place(job: GandivaJob): boolean {
    const list = this.listOf(job.gpus);
    if (list.length > 0) {
      const ns = list.shift()!;
      // strict `<`: a set takes a packed job only while util + 1 < capacity
      if (ns.util + 1 < ns.capacity) {
        addJob(list, ns, job, true);
        return true;
      }
      list.push(ns);
    }
    if (Math.ceil(job.gpus / this.gpn) <= this.freeNodes) {
      const ns = this.newSet(job.gpus);
      addJob(list, ns, job, true);
      return true;
    }
    // no resource: time-slicing on the class's first set
    if (list.length > 0) {
      addJob(list, list.shift()!, job, true);
      return true;
    }
    return false;
  }

  /** `gandiva_node_set_adjust`: each class's GPUs in proportion to its jobs' demand. */
  adjust(): void {
    const demand = new Map<number, number>();
    const occupied = new Map<number, number>();
    let total = 0;
    for (const [g, list] of this.classes) {
      const jobs = list.reduce((s, ns) => s + ns.jobs.length, 0);
      demand.set(g, jobs * g);
      occupied.set(g, list.reduce((s, ns) => s + ns.nodes * this.gpn, 0));
      total += jobs * g;
    }
    if (total === 0) return;
    for (const [g, list] of this.classes) {
      const d = demand.get(g)!;
      if (d === 0) continue;
      const plan = Math.floor((d / total) * this.numGpu);
      const target = plan < d ? plan : d;
      const diff = target - occupied.get(g)!;
      if (diff > 0) this.expand(g, list, Math.ceil(diff / g));
      else if (diff < 0) this.shrink(list, Math.ceil(-diff / g));
    }
  }

  /** `gandiva_node_set_expand`. */
  private expand(g: number, list: NodeSet[], numNs: number): void {
    const numNode = Math.ceil(g / this.gpn);
    // the artifact's outer loop variable `i` is rebound by the inner `for i in range(num_node)`:
    // after a set is made it is num_node − 1, so one-node classes skip the re-spread when the last
    // try made a set (and the new empty sets are then freed by the next time-slicing pass)
    let i = 0;
    for (let k = 1; k <= numNs; k++) {
      i = k;
      if (numNode <= this.freeNodes) {
        list.push(this.newSet(g));
        i = numNode - 1;
      }
    }
    if (i > 0) {
      const moved: GandivaJob[] = [];
      for (const ns of list) {
        if (ns.jobs.length === 0) continue;
        moved.push(...ns.jobs);
        ns.jobs = [];
        ns.util = 0;
      }
      for (const job of moved) addJob(list, list[0], job, false);
    }
  }

  /** `gandiva_node_set_shrink`: free the first sets (keeping one), their jobs to the least-`util` set. */
  private shrink(list: NodeSet[], numNs: number): void {
    if (list.length <= numNs) numNs = list.length - 1;
    const moved: GandivaJob[] = [];
    let i = 0;
    for (let k = 1; k <= numNs; k++) {
      i = k;
      const ns = list.shift()!;
      moved.push(...ns.jobs);
      this.freeNodes += ns.nodes;
    }
    if (i > 0) for (const job of moved) addJob(list, list[0], job, false);
  }

  /**
   * `time_slicing_execute`: in each set the first `min(jobs, capacity)` jobs run for `timeDiff`
   * less their overhead; a job whose executed time reaches its duration ends at
   * `now − (executed − duration)`; on whole minutes the running ones rotate to the back; empty sets
   * are freed.
   */
  timeSlice(now: number, timeDiff: number): SliceOutcome {
    const switchJob = now % 60 === 0;
    const ended: GandivaJob[] = [];
    let nodeRelease = false;
    for (const list of this.classes.values()) {
      const release: NodeSet[] = [];
      for (const ns of list) {
        const concurrency = Math.min(ns.jobs.length, ns.capacity);
        const endList: GandivaJob[] = [];
        let i = 0;
        for (const r of ns.jobs) {
          r.executed += Math.max(timeDiff - r.overhead, 0);
          r.overhead = 0;
          if (r.executed >= r.duration) {
            endList.push(r);
            r.endTime = now - (r.executed - r.duration);
          }
          i++;
          if (i >= concurrency) break;
        }
        if (switchJob && ns.jobs.length > concurrency) ns.jobs = [...ns.jobs.slice(concurrency), ...ns.jobs.slice(0, concurrency)];
        for (const e of endList) ns.jobs.splice(ns.jobs.indexOf(e), 1);
        ended.push(...endList);
        if (ns.jobs.length === 0) {
          this.freeNodes += ns.nodes;
          release.push(ns);
          nodeRelease = true;
        }
      }
      for (const ns of release) list.splice(list.indexOf(ns), 1);
    }
    return { ended, nodeRelease };
  }
}

/** Put a job on a set; `reinsert` = the set was popped from the list and goes back at its end. Then sort by `util` (stable). */
function addJob(list: NodeSet[], ns: NodeSet, job: GandivaJob, reinsert: boolean): void {
  ns.util += 1;
  ns.jobs.push(job);
  if (reinsert) list.push(ns);
  list.sort((a, b) => a.util - b.util);
}
