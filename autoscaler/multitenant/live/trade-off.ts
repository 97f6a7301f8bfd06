/**
 * The trade-off of a decision in words (pure): which function's cores went to which, and the
 * cluster's utility before and after ("gave 0.4 core of X to Y: utility 2.60 → 2.90"), whatever
 * controller decided. The utility is the runner's own estimate (Faro's PenaltySum term per job,
 * latency by M/D/c at the rate offered now; queue-model.ts), so events of every controller read
 * alike.
 */
import type { JobView } from '../types';
import { bestUtility, dropPenalty, type ModelJob } from './queue-model';

/** A job's allocation for the estimate. */
export interface Held {
  replicas: number;
  quota: number;
  acceptRate: number;
}

/** The offered rate a job's view gives: the recent rate where the runner measured one, else the last complete minute's. */
export function offeredRps(j: JobView): number {
  if (j.arrivalRps !== undefined && Number.isFinite(j.arrivalRps)) return j.arrivalRps;
  const last = j.minuteCounts[j.minuteCounts.length - 1];
  return last === undefined ? 0 : last / 60;
}

export const modelOf = (j: JobView): ModelJob => ({ processingMs: j.processingMs, sloMs: j.sloMs, sloPercentile: j.sloPercentile, lambda: offeredRps(j) });

/** A job's utility with `cores` admitting `acceptRate` of its requests: U(aλ) · (1 − φ(1 − a)). */
export function utilityAt(j: ModelJob, cores: number, acceptRate: number): number {
  if (!(cores > 0)) return 0;
  // the accept-rate grid of bestUtility restricted to its first point (a = 1) at the admitted rate
  const u = bestUtility({ ...j, lambda: j.lambda * acceptRate }, cores, 2);
  return (u.acceptRate === 1 ? u.utility : 0) * (1 - dropPenalty(1 - acceptRate));
}

/** "gave 0.4 core of X to Y (+0.4)", from the per-job core changes. */
export function describeMoves(names: readonly string[], from: readonly number[], to: readonly number[]): string {
  const gave = names.map((n, i) => ({ n, d: Math.round((to[i] - from[i]) * 100) / 100 }));
  const donors = gave.filter((g) => g.d < 0).map((g) => `${(-g.d).toFixed(1)} core of ${g.n}`);
  const takers = gave.filter((g) => g.d > 0).map((g) => `${g.n} (+${g.d.toFixed(1)})`);
  if (takers.length === 0 && donors.length === 0) return 'kept the cores';
  if (takers.length === 0) return `took back ${donors.join(', ')} (left free)`;
  return `gave ${donors.length ? donors.join(', ') : 'free cores'} to ${takers.join(', ')}`;
}

/** The moves and Σ utility before → after, e.g. "gave 0.4 core of x to y (+0.4): utility 1.20 → 1.85". */
export function tradeOff(jobs: readonly JobView[], from: readonly Held[], to: readonly Held[]): string {
  const models = jobs.map(modelOf);
  const cores = (h: readonly Held[]) => h.map((x) => x.replicas * x.quota);
  const sum = (h: readonly Held[]) => h.reduce((s, x, i) => s + utilityAt(models[i], x.replicas * x.quota, x.acceptRate), 0);
  return `${describeMoves(jobs.map((j) => j.name), cores(from), cores(to))}: utility ${sum(from).toFixed(2)} → ${sum(to).toFixed(2)}`;
}
