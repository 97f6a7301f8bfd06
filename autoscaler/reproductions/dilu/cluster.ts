/**
 * The GPU cluster Dilu's scheduling simulator places instances on (ASPLOS'25 artifact,
 * `scheduling/simulations/baseline/`): nodes of 4 GPUs, each GPU with 40 GB and an SM total of 1.
 * A GPU is *active* once something is booked on it and goes back to the *pool* of unused GPUs when
 * its last instance leaves. Both lists keep the artifact's order: the active list in activation
 * order, the pool in id order with every returned GPU appended at its end.
 *
 * The booked sums are running floating-point sums, added and subtracted in event order and never
 * reset, as the artifact keeps them: placements tie on exactly equal scores, so the port must
 * reach the same doubles.
 */

export type InstanceType = 'inference' | 'llm-inference' | 'training';

/** One start event's instance, as the simulator's input gives it. */
export interface SchedInstance {
  readonly name: string;
  readonly type: InstanceType;
  /** GPUs a training job needs (1 for inference). */
  readonly gpuNum: number;
  /** SM request r (share of one GPU) per GPU. */
  readonly smRequest: number;
  /** SM limit l per GPU. */
  readonly smLimit: number;
  /** Memory per GPU, GB (one entry per GPU for training, one for inference). */
  readonly memoryGb: readonly number[];
}

/** What one instance books on one GPU. */
export interface Part {
  readonly gpu: number;
  readonly req: number;
  readonly lim: number;
  readonly mem: number;
}

export interface Gpu {
  readonly id: number;
  readonly node: number;
  smReq: number;
  smLim: number;
  mem: number;
  /** In the active list (else in the pool). */
  on: boolean;
  /** Instance name → the memory it holds here. */
  readonly held: Map<string, number>;
}

/** A placed instance: its parts, and what deleting it subtracts (the artifact subtracts the instance's r and l). */
export interface Placed {
  readonly inst: SchedInstance;
  readonly parts: readonly Part[];
  readonly release: { readonly req: number; readonly lim: number };
}

export interface ClusterState {
  readonly gpus: Gpu[];
  readonly gpusPerNode: number;
  readonly memGb: number;
  active: Gpu[];
  pool: Gpu[];
  readonly placed: Map<string, Placed>;
}

export const DILU_CLUSTER = { nodes: 1000, gpusPerNode: 4, memGb: 40 };

export function makeCluster(nodes = DILU_CLUSTER.nodes, gpusPerNode = DILU_CLUSTER.gpusPerNode, memGb = DILU_CLUSTER.memGb): ClusterState {
  const gpus: Gpu[] = [];
  for (let i = 0; i < nodes * gpusPerNode; i++) {
    gpus.push({ id: i, node: Math.floor(i / gpusPerNode), smReq: 0, smLim: 0, mem: 0, on: false, held: new Map() });
  }
  return { gpus, gpusPerNode, memGb, active: [], pool: gpus.slice(), placed: new Map() };
}

/** Ω and γ bound the sums of requests and limits on a GPU (SM total 1). */
export interface Bounds {
  readonly omega: number;
  readonly gamma: number;
}

export function fits(g: Gpu, req: number, lim: number, mem: number, b: Bounds, memGb: number): boolean {
  return g.smReq + req <= b.omega && g.smLim + lim <= b.gamma && g.mem + mem <= memGb;
}

/** Moves a GPU from the pool to the end of the active list. */
export function activate(c: ClusterState, g: Gpu): void {
  if (g.on) return;
  c.pool.splice(c.pool.indexOf(g), 1);
  c.active.push(g);
  g.on = true;
}

/** Books the parts of a placement: GPUs from the pool become active (appended in part order). */
export function book(c: ClusterState, inst: SchedInstance, parts: readonly Part[], release = { req: inst.smRequest, lim: inst.smLimit }): void {
  for (const p of parts) {
    const g = c.gpus[p.gpu];
    if (!g.on) activate(c, g);
    g.smReq += p.req;
    g.smLim += p.lim;
    g.mem += p.mem;
    g.held.set(inst.name, p.mem);
  }
  c.placed.set(inst.name, { inst, parts, release });
}

/**
 * Removes an instance: each of its GPUs loses the instance's r, l and the memory it held there;
 * GPUs left with no instance return to the pool's end, in active-list order. False if unknown.
 */
export function unbook(c: ClusterState, name: string): boolean {
  const p = c.placed.get(name);
  if (!p) return false;
  c.placed.delete(name);
  const emptied = new Set<Gpu>();
  for (const part of p.parts) {
    const g = c.gpus[part.gpu];
    const mem = g.held.get(name);
    if (mem === undefined) continue;
    g.held.delete(name);
    g.smReq -= p.release.req;
    g.smLim -= p.release.lim;
    g.mem -= mem;
    if (g.held.size === 0) emptied.add(g);
  }
  if (emptied.size > 0) {
    const back = c.active.filter((g) => emptied.has(g));
    for (const g of back) g.on = false;
    c.active = c.active.filter((g) => !emptied.has(g));
    c.pool.push(...back);
  }
  return true;
}

/** Renames a placed instance (a finished move's new booking takes the instance's name). */
export function rename(c: ClusterState, from: string, to: string): void {
  const p = c.placed.get(from);
  if (!p || c.placed.has(to)) throw new Error(`rename ${from} → ${to}: unknown source or taken target`);
  c.placed.delete(from);
  c.placed.set(to, { ...p, inst: { ...p.inst, name: to } });
  for (const part of p.parts) {
    const g = c.gpus[part.gpu];
    const m = g.held.get(from);
    if (m === undefined) continue;
    g.held.delete(from);
    g.held.set(to, m);
  }
}

/** Mean over active GPUs of 1 − Σrequest and of 1 − memory/total (0 when none is active). */
export function fragmentation(c: ClusterState): { sm: number; mem: number } {
  const n = c.active.length;
  if (n === 0) return { sm: 0, mem: 0 };
  let sm = 0;
  let mem = 0;
  for (const g of c.active) {
    sm += 1 - g.smReq;
    mem += 1 - g.mem / c.memGb;
  }
  return { sm: sm / n, mem: mem / n };
}
