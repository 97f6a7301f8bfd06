import type { ClusterSpec, ScalingCurve, SchedulerState, TrainingJob } from '../../../autoscaler/training/types';

/** Builder for test jobs: aJob('a').iterations(100).deadline(10).build(). */
export function aJob(id: string) {
  let job: TrainingJob = {
    id,
    model: 'm',
    submitTime: 0,
    iterations: 100,
    doneIterations: 0,
    batchSize: 64,
    maxGpus: 64,
    requestedGpus: 1,
    curve: linear(8),
  };
  const b = {
    iterations: (n: number) => ((job = { ...job, iterations: n }), b),
    done: (n: number) => ((job = { ...job, doneIterations: n }), b),
    deadline: (d: number) => ((job = { ...job, deadline: d }), b),
    submit: (t: number) => ((job = { ...job, submitTime: t }), b),
    curve: (c: ScalingCurve) => ((job = { ...job, curve: c }), b),
    maxGpus: (n: number) => ((job = { ...job, maxGpus: n }), b),
    requested: (n: number) => ((job = { ...job, requestedGpus: n }), b),
    attained: (s: number) => ((job = { ...job, attainedGpuSeconds: s }), b),
    waiting: (r: number) => ((job = { ...job, waitingRounds: r }), b),
    soft: (d: number) => ((job = { ...job, softDeadline: d }), b),
    build: () => job,
  };
  return b;
}

/** Perfectly linear curve: n GPUs → n iterations/s, up to `max`. */
export function linear(max: number, perGpu = 1): ScalingCurve {
  const gpus: number[] = [];
  for (let n = 1; n <= max; n *= 2) gpus.push(n);
  return { gpus, iterPerSec: gpus.map((n) => n * perGpu) };
}

export function cluster(nodes: number, gpusPerNode: number): ClusterSpec {
  return { nodes, gpusPerNode };
}

export function state(c: ClusterSpec, jobs: TrainingJob[], slotSeconds = 1): SchedulerState {
  return { cluster: c, slotSeconds, jobs };
}
