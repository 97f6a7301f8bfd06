/**
 * The ElasticFlow artifact's placement (`cluster.py` `elastic_placement` / `release_job_res`,
 * called from `ef_sim_jobs_access_control`) and the GPU ranks its log gives each job (`log.py`
 * `scheduling_result`), which key the overhead cache. Node ids are per switch (0..n-1 in each),
 * and the free-node list is kept sorted by id with a stable sort, so which of two nodes with the
 * same id comes first depends on the order they were freed (at the start it is switch by switch,
 * unsorted): `ArtifactCluster` keeps that list
 * across events. Every event releases every job first (`estimate_all_jobs`), so each placement
 * starts with every node set empty:
 * - jobs of ≥ one node's GPUs first, by GPU count descending (a stable sort of the round's order),
 *   then the smaller ones class by class (4, 2, 1 on 8-GPU nodes), each class in round order;
 * - a job goes to the first node set of its class's list if it fits (lists are kept sorted by
 *   use), else to a set of a larger class, else to new whole nodes taken in id order; a set moves
 *   to the class of its free GPUs (the largest class that divides them); a set that is popped
 *   and does not fit goes back to the end of its list, as the artifact does;
 * - ranks: nodes in id order; a set of a class ≥ one node gives its first job the ranks from its
 *   first node on; a smaller set gives its jobs consecutive ranks in the order they were placed.
 */
import type { ClusterSpec } from '../../training/types';

/** The artifact's node-set classes (`CLUSTER.node_g`), in its dict order. */
const CLASSES = [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 88, 128, 256];

interface NodeRef {
  /** Position in the log's row (switch-major): the node's first GPU rank ÷ GPUs per node. */
  readonly pos: number;
  /** The artifact's node id: its index within its switch. */
  readonly id: number;
}

interface NodeSet {
  nodes: NodeRef[];
  jobs: string[];
  util: number;
  capacity: number;
}

/** The artifact's cluster state that outlives an event: the ordered free-node list and which set holds which job. */
export class ArtifactCluster {
  private free: NodeRef[];
  private readonly sets = new Map<string, { set: NodeSet; gpus: number }>();
  private readonly gpn: number;

  constructor(private readonly cluster: ClusterSpec) {
    this.gpn = cluster.gpusPerNode;
    const per = cluster.nodesPerSwitch ?? cluster.nodes;
    // `init_gandiva_nodes`: switch by switch, not sorted; the list is sorted by id only when a set is released
    this.free = [...Array(cluster.nodes).keys()].map((pos) => ({ pos, id: pos % per }));
  }

  /** `release_job_res`: the job leaves its set; an emptied set's nodes return to the free list. */
  release(jobId: string): void {
    const held = this.sets.get(jobId);
    if (!held) return;
    this.sets.delete(jobId);
    const { set, gpus } = held;
    set.util -= gpus;
    set.jobs.splice(set.jobs.indexOf(jobId), 1);
    if (set.util === 0) this.free = stableById([...this.free, ...set.nodes]);
  }

  /** Places the jobs with GPUs (`order`: the round's final order) and returns each one's GPU ranks. */
  place(order: ReadonlyArray<readonly [string, number]>): Map<string, number[]> {
    const gpn = this.gpn;
    const lists = new Map<number, NodeSet[]>(CLASSES.map((c) => [c, []]));
    const classOf = new Map<NodeSet, number>();
    const sortByUtil = (l: NodeSet[]) => l.sort((a, b) => a.util - b.util);
    const gpusOf = new Map(order);
    const file = (set: NodeSet, c: number) => {
      lists.get(c)!.push(set);
      classOf.set(set, c);
    };
    /** A set that gained a job moves to the class of its free GPUs, or stays in `home` when full. */
    const settle = (set: NodeSet, home: NodeSet[], homeClass: number): void => {
      const left = set.nodes.length * gpn - set.util;
      if (left > 0)
        for (const c of [...CLASSES].reverse()) {
          if (c > left || left % c !== 0) continue;
          file(set, c);
          sortByUtil(home);
          sortByUtil(lists.get(c)!);
          return;
        }
      file(set, homeClass);
      sortByUtil(home);
    };
    const tryFit = (list: NodeSet[], id: string, g: number, home: NodeSet[]): boolean => {
      if (list.length === 0) return false;
      const set = list.shift()!;
      if (set.util + g > set.capacity) {
        list.push(set);
        return false;
      }
      set.util += g;
      set.jobs.push(id);
      this.sets.set(id, { set, gpus: g });
      settle(set, home, g);
      return true;
    };
    const place = (id: string, g: number): void => {
      const home = lists.get(g);
      if (!home) throw new Error(`artifact placement: no node-set class for ${g} GPUs`);
      if (tryFit(home, id, g, home)) return;
      for (const c of [...CLASSES].reverse()) {
        if (c <= g) break;
        if (tryFit(lists.get(c)!, id, g, home)) return;
      }
      const n = Math.ceil(g / gpn);
      if (n > this.free.length) throw new Error(`artifact placement: job ${id} needs ${n} free nodes, ${this.free.length} left`);
      const set: NodeSet = { nodes: this.free.splice(0, n), jobs: [id], util: g, capacity: n * gpn };
      this.sets.set(id, { set, gpus: g });
      settle(set, home, g);
    };
    const byGpus = [...order].filter(([, g]) => g > 0).sort((a, b) => b[1] - a[1]);
    for (const [id, g] of byGpus) if (g >= gpn) place(id, g);
    for (const c of [...CLASSES].reverse()) {
      if (c >= gpn) continue;
      for (const [id, g] of byGpus) if (g === c) place(id, g);
    }
    // ranks, as the log assigns them: nodes in row order (a set sits in exactly one class list)
    const ranks = new Map<string, number[]>();
    const setAt = new Map<number, NodeSet>();
    for (const list of lists.values()) for (const set of list) for (const n of set.nodes) setAt.set(n.pos, set);
    for (let pos = 0; pos < this.cluster.nodes; pos++) {
      const set = setAt.get(pos);
      if (!set) continue;
      if (classOf.get(set)! >= gpn) {
        const first = set.jobs[0];
        if (!ranks.has(first)) ranks.set(first, range(pos * gpn, gpusOf.get(first)!));
        continue;
      }
      let at = pos * gpn;
      for (const id of set.jobs) {
        const g = gpusOf.get(id)!;
        ranks.set(id, range(at, g));
        at += g;
      }
    }
    return ranks;
  }
}

/** Python's `list.sort(key=id)`: stable, so nodes with the same id keep their order. */
function stableById(nodes: NodeRef[]): NodeRef[] {
  return [...nodes].sort((a, b) => a.id - b.id);
}

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
