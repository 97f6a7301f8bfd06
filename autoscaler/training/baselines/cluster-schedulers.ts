/**
 * Cluster-scheduler baselines: Tiresias (2D-LAS), Gandiva (time-slicing), Themis (finish-time
 * fairness), Optimus (remaining-time marginal gain) and Pollux (goodput marginal gain).
 */
import { levelsOf, remainingIterations, throughputAt } from '../curve';
import { marginalReturn } from '../mlfaas/allocation';
import { greedyFill } from '../marginal';
import { buddyPlacement } from '../placement/buddy';
import type { SchedulerState, TrainingJob, TrainingPolicy } from '../types';
import { active, capacityOf, gangInOrder, gangSize } from './ordered-allocation';

/** Tiresias' queue thresholds in attained GPU-seconds (ElasticFlow's `dlas-gpu` setting). */
export const TIRESIAS_QUEUES = [3250, 7200] as const;

export function tiresiasQueue(job: TrainingJob, limits: readonly number[] = TIRESIAS_QUEUES): number {
  const a = job.attainedGpuSeconds ?? 0;
  let q = 0;
  while (q < limits.length && a >= limits[q]) q++;
  return q;
}

export const tiresias: TrainingPolicy = {
  name: 'tiresias',
  description: 'Tiresias 2D-LAS: queues by attained GPU-seconds (3250 s, 7200 s), FIFO within a queue, gang-scheduled, preemptive',
  elastic: false,
  placement: buddyPlacement,
  allocation: {
    allocate: (state) => {
      const order = active(state).sort((a, b) => tiresiasQueue(a) - tiresiasQueue(b) || a.submitTime - b.submitTime || (a.id < b.id ? -1 : 1));
      return gangInOrder('tiresias', order, state, true, (j) => `queue ${tiresiasQueue(j)}`);
    },
  },
};

export const gandiva: TrainingPolicy = {
  name: 'gandiva',
  description: 'Gandiva-like: gang-scheduled at the requested GPUs, time-sliced round-robin when oversubscribed (longest-waiting first)',
  elastic: false,
  placement: buddyPlacement,
  allocation: {
    allocate: (state) => {
      const order = active(state).sort(
        (a, b) => (b.waitingRounds ?? 0) - (a.waitingRounds ?? 0) || a.submitTime - b.submitTime || (a.id < b.id ? -1 : 1),
      );
      return gangInOrder('gandiva', order, state, true, (j) => `waited ${j.waitingRounds ?? 0} rounds`);
    },
  },
};

/** Themis' finish-time fairness ρ = shared finish time / isolated finish time (estimated). */
export function finishTimeFairness(job: TrainingJob, state: SchedulerState, now: number): number {
  const cap = capacityOf(state);
  const n = gangSize(job, cap);
  const t = throughputAt(job.curve, n);
  if (t <= 0) return 0;
  const share = Math.max(1, active(state).length);
  const isolated = job.iterations / t;
  const shared = now - job.submitTime + (remainingIterations(job) / t) * Math.max(1, (share * n) / cap);
  return shared / isolated;
}

export const themis: TrainingPolicy = {
  name: 'themis',
  description: 'Themis-like finish-time fairness: jobs with the worst ρ = T_shared/T_isolated go first, gang-scheduled with backfill',
  elastic: false,
  placement: buddyPlacement,
  allocation: {
    allocate: (state, now) => {
      const rho = new Map(active(state).map((j) => [j.id, finishTimeFairness(j, state, now)]));
      const order = active(state).sort((a, b) => rho.get(b.id)! - rho.get(a.id)! || a.submitTime - b.submitTime);
      return gangInOrder('themis', order, state, true, (j) => `rho ${rho.get(j.id)!.toFixed(2)}`);
    },
  },
};

function elasticGreedy(name: string, state: SchedulerState, gain: (j: TrainingJob, from: number, to: number) => number) {
  const cap = capacityOf(state);
  const jobs = active(state).filter((j) => levelsOf(j, cap).length > 0);
  const gpus = greedyFill(jobs, {}, cap, cap, gain);
  const reasons: Record<string, string> = {};
  for (const j of jobs) reasons[j.id] = `${name}: ${gpus[j.id] ?? 0} GPUs by marginal gain`;
  const used = Object.values(gpus).reduce((a, b) => a + b, 0);
  return { gpus, reasons, reason: `${name}: ${used}/${cap} GPUs in use` };
}

/** Optimus: seconds of remaining time saved per added GPU (starting a waiting job saves the most). */
export function optimusGain(job: TrainingJob, from: number, to: number): number {
  const rem = remainingIterations(job);
  const tTo = throughputAt(job.curve, to);
  if (tTo <= 0) return 0;
  if (from === 0) return 1e12 / (1 + rem / tTo);
  return (rem / throughputAt(job.curve, from) - rem / tTo) / (to - from);
}

export const optimus: TrainingPolicy = {
  name: 'optimus',
  description: 'Optimus-like: elastic, GPUs one step at a time to the job whose remaining time drops most per GPU',
  elastic: true,
  placement: buddyPlacement,
  allocation: { allocate: (state) => elasticGreedy('optimus', state, optimusGain) },
};

/** Pollux: normalised goodput (speed-up) gained per added GPU; with co-adapted batch when the job has a GNS. */
export const pollux: TrainingPolicy = {
  name: 'pollux',
  description: 'Pollux-like: elastic, goodput-maximising marginal allocation with batch co-adaptation; no deadline awareness',
  elastic: true,
  adaptsBatch: true,
  placement: buddyPlacement,
  allocation: { allocate: (state) => elasticGreedy('pollux', state, marginalReturn) },
};
