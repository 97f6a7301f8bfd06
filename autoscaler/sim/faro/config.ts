import type { LogNormSpec } from './random';

/**
 * The setup of the Faro artifact's simulation (`experiments/top9_twitter_1_1600_..._6hr_augmented`,
 * read 2026-11-27): what each number is and where it comes from.
 */
export interface FaroSimConfig {
  /** Cluster size in units (vCPUs); one replica at quota 1 takes one unit (node_resources_specs: cpu R). */
  readonly capacity: number;
  /** Per-request service time at quota 1, seconds (job_latency_specs.yaml: lognorm, mean ≈ 154 ms). */
  readonly service: LogNormSpec;
  /** Per-pass routing time at the job's HTTP proxy, seconds; every request passes twice (in and out). */
  readonly route: LogNormSpec;
  /** Requests assigned to one replica at once (max_concurrent_queries); it serves them one at a time. */
  readonly maxConcurrent: number;
  /** Tail drop when the job's queue holds more than this (max_queue_len). */
  readonly maxQueueLen: number;
  /** Replica start when a new pod is needed / when an idle pod of the job is reused, seconds. */
  readonly coldStartS: number;
  readonly hotStartS: number;
  /** Idle pods are reclaimed after this long (idle_timeout_s), checked every `monitorIntervalS`. */
  readonly idleTimeoutS: number;
  readonly monitorIntervalS: number;
  /** A job always keeps this many pods (min_workers). */
  readonly minWorkers: number;
  /** An upscale that found no free unit retries the rest after this long, until it succeeds. */
  readonly upscaleBackoffS: number;
  /** The executor stays busy this long after a downscale (hot_start_overhead_s). */
  readonly downscaleHoldS: number;
  /** Window of the latency the controller sees (look_back_period_s). */
  readonly lookBackS: number;
  /** Faro's model of a job: p and the SLO (the policies' processing_time and target_metric). */
  readonly processingMs: number;
  readonly sloMs: number;
  readonly sloPercentile: number;
  /**
   * As the artifact: a new accept rate takes effect only with an action that changes the replica
   * count, once that change is done. False: it takes effect at the tick that sets it.
   */
  readonly acceptRateOnlyWithReplicaChange: boolean;
  /**
   * Which replica a job's scheduler hands the head request to, among those with < `maxConcurrent`
   * assigned. 'roundRobin' (default): the artifact's, the next one in the shuffled cycle.
   * 'leastOutstanding': the mlfaas gateway's rule (gateway/proxy/balancer.ts, equal weights): the one
   * with the fewest assigned, ties broken in the shuffled cycle's order from the round robin's
   * pointer (no extra random draws).
   */
  readonly router?: 'roundRobin' | 'leastOutstanding';
  /**
   * How a job's quota limits its replicas' CPU. 'quota' (default, the artifact's): a request's
   * service time is its draw ÷ the quota (a hard cap, cgroup `cpu.cfs_quota_us`). 'shares': work
   * conserving, the quota a weight (`cpu.shares`) and one CPU the cap (shares.ts): a busy replica
   * gets at least its quota and borrows what idle replicas of the cluster leave.
   */
  readonly cpu?: 'quota' | 'shares';
  /**
   * With `cpu` 'shares': units per node (default: the whole capacity on one node). Pods are placed
   * on the node with the most units free (Σ its pods × their job's quota); a replica borrows only
   * from its own node. Nodes of `nodeUnits`, the last one the remainder.
   */
  readonly nodeUnits?: number;
}

export function faroSimConfig(capacity: number, over: Partial<FaroSimConfig> = {}): FaroSimConfig {
  return {
    capacity,
    service: { shape: 0.42247119243841247, loc: 0.07930158214998745, scale: 0.06858078649769431 },
    route: { shape: 0.4807840738997673, loc: 0.003485330525882586, scale: 0.000987812095765591 },
    maxConcurrent: 4,
    maxQueueLen: 50,
    coldStartS: 35,
    hotStartS: 3,
    idleTimeoutS: 30,
    monitorIntervalS: 5,
    minWorkers: 1,
    upscaleBackoffS: 5,
    downscaleHoldS: 3,
    lookBackS: 30,
    processingMs: 180,
    sloMs: 720,
    sloPercentile: 99,
    acceptRateOnlyWithReplicaChange: true,
    ...over,
  };
}
