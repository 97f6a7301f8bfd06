import { cobyla, type CobylaResult } from './cobyla';
import { objectiveFn, evaluate, type FaroProblem } from './objective';

/**
 * Faro's solver (Sec. 4.3) as the artifact runs it: (1) COBYLA on the relaxed (continuous)
 * problem from x⁰, initial step 3, ≤ 1,000 evaluations, constraints Σx ≤ R and x ≥ 1 (and
 * 0 ≤ a ≤ 100 for accept rates); (2) ceil, then while Σx > R remove the replica whose removal
 * gives the lowest objective (rounded to 4 dp; ties: smallest |x − x⁰|, then the lowest index);
 * (3) shrink: per job, remove replicas while the objective worsens by at most 1e-4; if anything
 * shrank, offer all leftover replicas to each job in turn and keep the first offer that improves
 * the objective by more than 1e-4 (then shrink again). Accept rates are left as COBYLA set them.
 */

export const SHRINK_EPSILON = 1e-4;
export const SOLVER_DEFAULTS = { rhoBeg: 3, rhoEnd: 1e-4, maxFun: 1000, adjust: true };

/** numpy's round(v, 4): round half to even on v·10⁴. */
export function round4(v: number): number {
  const s = v * 1e4;
  const r = Math.round(s);
  const even = Math.abs(s - Math.trunc(s)) === 0.5 ? 2 * Math.round(s / 2) : r;
  return even / 1e4;
}

type Obj = (replicas: readonly number[]) => number;

/** Step (2): integer and within capacity. `x0` breaks ties by the least change. */
export function makeFeasible(x: readonly number[], obj: Obj, capacity: number, x0: readonly number[], minReplicas = 1): number[] {
  let cur = x.map((v) => Math.ceil(v));
  let used = cur.reduce((s, v) => s + v, 0);
  for (let guard = 0; used > capacity && guard < 100000; guard++) {
    let best: { key: [number, number]; x: number[] } | null = null;
    for (let i = 0; i < cur.length; i++) {
      if (cur[i] <= minReplicas) continue;
      const nx = cur.slice();
      nx[i] -= 1;
      const key: [number, number] = [round4(obj(nx)), Math.abs(nx[i] - x0[i])];
      if (best === null || key[0] < best.key[0] || (key[0] === best.key[0] && key[1] < best.key[1])) best = { key, x: nx };
    }
    if (best === null) break; // every job at its minimum: cannot fit (R < n)
    cur = best.x;
    used = cur.reduce((s, v) => s + v, 0);
  }
  return cur;
}

/** Step (3): shrink, then offer the leftover replicas. */
export function adjustSolution(x: readonly number[], obj: Obj, capacity: number, minReplicas = 1, depth = 0): number[] {
  let value = obj(x);
  const nx = x.slice();
  for (let i = 0; i < nx.length; i++) {
    while (nx[i] > minReplicas) {
      nx[i] -= 1;
      const v = obj(nx);
      if (v - value > SHRINK_EPSILON) {
        nx[i] += 1;
        break;
      }
      value = v;
    }
  }
  if (nx.every((v, i) => v === x[i])) return x.slice();
  return offerLeftover(nx, obj, capacity, minReplicas, depth);
}

export function offerLeftover(x: readonly number[], obj: Obj, capacity: number, minReplicas = 1, depth = 0): number[] {
  const avail = capacity - x.reduce((s, v) => s + v, 0);
  const value = obj(x);
  let nx = x.slice();
  for (let i = 0; i < nx.length; i++) {
    const add = Math.trunc(avail);
    nx[i] += add;
    const v = obj(nx);
    if (value - v > SHRINK_EPSILON) {
      if (depth < 50) nx = adjustSolution(nx, obj, capacity, minReplicas, depth + 1);
      break;
    }
    nx[i] -= add;
  }
  return nx;
}

export interface SolveResult {
  replicas: number[];
  /** Accept rates in [0, 1] (penalty variants). */
  acceptRate?: number[];
  /** Objective of the final integer solution. */
  objective: number;
  utilities: number[];
  /** COBYLA's continuous optimum and its objective. */
  continuous: { x: number[]; objective: number; evaluations: number; status: CobylaResult['status'] };
}

/** Steps (1)–(3) for one forecast. */
export function solveFaro(p: FaroProblem, opts: Partial<typeof SOLVER_DEFAULTS> = {}): SolveResult {
  const o = { ...SOLVER_DEFAULTS, ...opts };
  const n = p.x0.length;
  const f = objectiveFn(p);
  const v0 = p.x0.slice();
  if (p.withDrop) for (let i = 0; i < n; i++) v0.push(100 * (p.acceptRate0?.[i] ?? 1));
  const g = (v: number[]): number[] => {
    let used = 0;
    for (let i = 0; i < n; i++) used += v[i];
    const c = [p.capacity - used];
    for (let i = 0; i < n; i++) c.push(v[i] - 1);
    if (p.withDrop) {
      for (let i = 0; i < n; i++) c.push(v[n + i]);
      for (let i = 0; i < n; i++) c.push(100 - v[n + i]);
    }
    return c;
  };
  const sol = cobyla(f, g, v0, { rhoBeg: o.rhoBeg, rhoEnd: o.rhoEnd, maxFun: o.maxFun });
  const accept = p.withDrop ? sol.x.slice(n) : [];
  const replicaObj: Obj = (x) => f(p.withDrop ? [...x, ...accept] : x);
  let x = makeFeasible(sol.x.slice(0, n), replicaObj, p.capacity, p.x0);
  if (o.adjust) x = adjustSolution(x, replicaObj, p.capacity);
  const full = p.withDrop ? [...x, ...accept] : x;
  const final = evaluate(p, full);
  return {
    replicas: x.map((v) => Math.round(v)),
    acceptRate: p.withDrop ? accept.map((a) => a / 100) : undefined,
    objective: final.value,
    utilities: final.utilities,
    continuous: { x: sol.x, objective: sol.f, evaluations: sol.evaluations, status: sol.status },
  };
}
