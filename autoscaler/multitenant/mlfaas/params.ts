/** The mlfaas fixed-cluster controller's parameters; defaults tuned on days 1–10 (bench/results/multitenant-tuning.md). */
import type { LatencyModel } from './latency';
import type { ForecastParams } from './forecast';

export interface MlfaasParams {
  /** Tick (s). */
  readonly tickS: number;
  readonly model: LatencyModel;
  readonly forecast: ForecastParams;
  /** The model must predict at most sloTarget · SLO (a margin for the model's error). */
  readonly sloTarget: number;
  /** sloTarget while the cluster is overloaded (the knapsack's cost of serving a job). */
  readonly overloadSloTarget: number;
  /** Replicas are planned so that the planned rate needs a quota of at most qPlan (headroom a quota rise can use at once). */
  readonly qPlan: number;
  /** Forecast level (σ above the mean) every job's replicas cover before the budget is filled, and the horizon (minutes). */
  readonly zBase: number;
  readonly planHorizon: number;
  /** Replicas held in all: capacity · (1 + overcommit) (quotas below 1 make room for the excess). */
  readonly overcommit: number;
  /** Ticks the plan must stay below the replicas held before one is removed. */
  readonly downHoldTicks: number;
  readonly maxReplicasPerJob: number;
  /** Lowest quota (a warm replica of a job not served). */
  readonly qFloor: number;
  /** Forecast levels the quota allocation searches. */
  readonly zMin: number;
  readonly zMax: number;
  /** Lowest level every job is squeezed to, and the expected-utility margin the knapsack must win by. */
  readonly zSqueeze: number;
  readonly knapsackMargin: number;
  /** Overload: the fraction of the CPU the knapsack leaves that raises the served jobs' cover (the rest: one job partly admitted). */
  readonly spareToServed: number;
  /** The cluster counts as overloaded when the jobs' mean rates need more than overloadAt · capacity. */
  readonly overloadAt: number;
  /** Overload: level a job must be covered at to count as served, and the discount for jobs served now. */
  readonly zServe: number;
  readonly stickiness: number;
  /** How long a removed replica's pod still holds its quota (the runner's idle timeout + its check period, s). */
  readonly podIdleS: number;
  /** Per tick, the guard's rate keeps this fraction of the last (0: forget at once). */
  readonly guardDecay: number;
  /** Weight of the runner's arrival rate now (JobView.arrivalRps) against the forecast (0: ignore it). */
  readonly nowWeight: number;
  /** Keep the overload choice (who is served) for the rest of the minute it was made in. */
  readonly minuteLock: boolean;
  /** Under overload, plan each job at least the replica count of its cheapest sizing (least CPU), not only the fewest replicas. */
  readonly cheapestBase: boolean;
  /** A queue is provisioned to drain in drainS seconds. */
  readonly drainS: number;
}

export const DEFAULT_MLFAAS_PARAMS: MlfaasParams = {
  tickS: 10,
  model: { percentile: 0.99, rhoMax: 0.9 },
  forecast: { processNoise: 1, measurementNoise: 1, errorWeight: 0.1, initialStd: 2 },
  sloTarget: 0.75,
  overloadSloTarget: 1.2,
  qPlan: 1,
  zBase: 0,
  planHorizon: 2,
  overcommit: 0,
  downHoldTicks: 72,
  maxReplicasPerJob: 36,
  qFloor: 0.01,
  zMin: -2,
  zMax: 4,
  zSqueeze: -4,
  knapsackMargin: 0.5,
  overloadAt: 1.3,
  spareToServed: 1,
  zServe: -0.5,
  stickiness: 0.1,
  drainS: 5,
  podIdleS: 35,
  guardDecay: 0.7,
  nowWeight: 1,
  minuteLock: true,
  cheapestBase: true,
};
