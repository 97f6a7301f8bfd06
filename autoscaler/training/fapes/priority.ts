/**
 * FaPES job priorities (§5.1–5.2): (i) waiting (new or rescheduled) jobs before running ones;
 * (ii) waiting jobs by decreasing queueing time; (iii) running jobs by decreasing performance
 * achievement; a job that has waited `popUpRounds` rounds (3 in the paper) pops up to the top.
 * Filtering: running jobs due to finish within the next round are never rescheduled; others are
 * recycled in increasing order of achievement while that raises the cohort's average achievement.
 */

export interface CohortJob {
  readonly id: string;
  /** 0 for a job that holds GPUs now. */
  readonly waitingRounds: number;
  /** Seconds in the queue so far. */
  readonly queueingSeconds: number;
  /** Achieved goodput ÷ best achievable goodput, in [0, 1]. */
  readonly achievement: number;
  /** Predicted seconds to completion on the current allocation. */
  readonly remainingSeconds: number;
}

export const POP_UP_ROUNDS = 3;

/** Orders jobs by FaPES priority, highest first. */
export function prioritize(jobs: readonly CohortJob[], popUpRounds = POP_UP_ROUNDS): CohortJob[] {
  const rank = (j: CohortJob) => (j.waitingRounds >= popUpRounds ? 0 : j.waitingRounds > 0 ? 1 : 2);
  return [...jobs].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (rank(a) < 2 ? b.queueingSeconds - a.queueingSeconds : b.achievement - a.achievement) ||
      (a.id < b.id ? -1 : 1),
  );
}

/**
 * Dynamic filtering: which running jobs to recycle this round. `estimate(selected)` returns the
 * average achievement the cohort would reach with the recycled GPUs shared evenly. The current
 * average it is compared with is over the whole cohort: the `waiting` jobs (new arrivals, whose
 * achievement is 0 while they wait) and the selected running jobs (§5.1: "all jobs to be
 * (re)scheduled"); with no waiting jobs it is the selected jobs' average.
 */
export function filterRunning(
  running: readonly CohortJob[],
  roundSeconds: number,
  estimate: (recycled: readonly CohortJob[]) => number,
  waiting: readonly CohortJob[] = [],
): CohortJob[] {
  const eligible = running.filter((j) => j.remainingSeconds > roundSeconds).sort((a, b) => a.achievement - b.achievement);
  const chosen: CohortJob[] = [];
  const avg = (xs: readonly CohortJob[]) => (xs.length ? xs.reduce((s, j) => s + j.achievement, 0) / xs.length : 0);
  for (const j of eligible) {
    const next = [...chosen, j];
    if (estimate(next) <= avg([...waiting, ...next])) break;
    chosen.push(j);
  }
  return chosen;
}
