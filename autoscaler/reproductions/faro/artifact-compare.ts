import { buildProblem, type FaroLongTermOptions } from './longterm';
import { evaluate, objectiveFn, type FaroObjectiveName } from './objective';
import { adjustSolution, makeFeasible, solveFaro } from './solver';

/**
 * Compares our solver with answers of the artifact's own solver on snapshots
 * (test/fixtures/faro-solver-snapshots.json, produced outside the repo; see its `note`).
 * Three checks, from the most to the least exact:
 * - objective: our objective at the artifact's final answer equals the artifact's value;
 * - stages 2–3: from the artifact's continuous COBYLA point, our rounding and shrink give its integers;
 * - end to end: our COBYLA (Powell's 1994 algorithm, which the artifact's scipy ≤ 1.7 ran) against
 *   the fixture's scipy 1.17 (PRIMA's COBYLA): equal integers, or equal objective within 1e-3.
 */

export interface ArtifactSnapshot {
  name: string;
  capacity: number;
  x0: number[];
  objective: FaroObjectiveName;
  forecast: number[][];
  artifact: {
    replicas: number[];
    acceptRate: number[] | null;
    objective: number;
    continuous: { x: number[]; objective: number; evaluations: number };
  };
}

export interface SnapshotComparison {
  name: string;
  /** |our objective − theirs| at the artifact's answer. */
  objectivePortError: number;
  /** Stages 2–3 from the artifact's continuous point reproduce its integers. */
  stagesMatch: boolean;
  /** End to end: same integers. */
  same: boolean;
  /** End to end: our final objective − theirs (negative: ours better). */
  finalDiff: number;
  /** Our continuous optimum's objective − theirs. */
  continuousDiff: number;
}

export function snapshotProblem(s: Pick<ArtifactSnapshot, 'capacity' | 'x0' | 'objective'>, forecast: number[][], extra: Partial<FaroLongTermOptions> = {}) {
  return buildProblem({ objective: s.objective, capacity: s.capacity, ...extra }, s.x0.map((x0, i) => ({ x0, forecast: () => forecast[i] })), 0.6);
}

export function compareSnapshot(s: ArtifactSnapshot, endToEnd = true): SnapshotComparison {
  const p = snapshotProblem(s, s.forecast);
  const n = s.x0.length;
  const theirs = s.artifact.acceptRate ? [...s.artifact.replicas, ...s.artifact.acceptRate.map((a) => a * 100)] : s.artifact.replicas;
  const objectivePortError = Math.abs(evaluate(p, theirs).value - s.artifact.objective);
  const f = objectiveFn(p);
  const accept = p.withDrop ? s.artifact.continuous.x.slice(n) : [];
  const obj = (x: readonly number[]) => f(p.withDrop ? [...x, ...accept] : x);
  const staged = adjustSolution(makeFeasible(s.artifact.continuous.x.slice(0, n), obj, s.capacity, s.x0), obj, s.capacity);
  const stagesMatch = staged.every((v, i) => v === s.artifact.replicas[i]);
  if (!endToEnd) return { name: s.name, objectivePortError, stagesMatch, same: false, finalDiff: NaN, continuousDiff: NaN };
  const ours = solveFaro(p);
  return {
    name: s.name,
    objectivePortError,
    stagesMatch,
    same: ours.replicas.every((v, i) => v === s.artifact.replicas[i]),
    finalDiff: ours.objective - s.artifact.objective,
    continuousDiff: ours.continuous.objective - s.artifact.continuous.objective,
  };
}

export interface ComparisonSummary {
  snapshots: number;
  objectivePortMaxError: number;
  stagesMatched: number;
  /** End to end: equal integers, or equal objective within 1e-3. */
  matched: number;
  oursBetter: number;
  oursWorse: number;
  meanFinalDiff: number;
  medianAbsContinuousDiff: number;
}

export function summarise(rows: readonly SnapshotComparison[]): ComparisonSummary {
  const e2e = rows.filter((r) => !Number.isNaN(r.finalDiff));
  const abs = e2e.map((r) => Math.abs(r.continuousDiff)).sort((a, b) => a - b);
  return {
    snapshots: rows.length,
    objectivePortMaxError: Math.max(0, ...rows.map((r) => r.objectivePortError)),
    stagesMatched: rows.filter((r) => r.stagesMatch).length,
    matched: e2e.filter((r) => r.same || Math.abs(r.finalDiff) < 1e-3).length,
    oursBetter: e2e.filter((r) => !r.same && r.finalDiff <= -1e-3).length,
    oursWorse: e2e.filter((r) => !r.same && r.finalDiff >= 1e-3).length,
    meanFinalDiff: e2e.reduce((a, r) => a + r.finalDiff, 0) / Math.max(1, e2e.length),
    medianAbsContinuousDiff: abs.length ? abs[Math.floor(abs.length / 2)] : NaN,
  };
}
