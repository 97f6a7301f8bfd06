/**
 * A newly deployed function's capability profile as the local agent asks for it: a port defined
 * on the gateway side, implemented by RaPP (`autoscaler/rapp/`: `rappProfiler`, injected at the
 * composition root `cli/compose.ts`). The agent keeps what needs the node: running the replica at
 * each quota and timing it (`node-runtime/profiler.ts`), and the profile store; RaPP decides what
 * is predicted, what is measured, and how the two are combined.
 */
import type { CapabilityProfile, ProfilePoint } from '../providers/capability-profile';

/** What a deploy-time profile stage stores (the agent adds the function, version, time and device). */
export type ProfileStage = Pick<CapabilityProfile, 'points' | 'source' | 'measuredPoints' | 'requestLimit'>;

/** The agent's side of a deploy-time profile. */
export interface ProfileIO {
  /** Measures the replica at every (quota, batch) of the grid under the profiler's quota. */
  measure(batches: number[], quotas: number[]): Promise<ProfilePoint[]>;
  /** Stores a stage's profile; each replaces the one before (the autoscaler reloads on a new source). */
  store(stage: ProfileStage): Promise<void>;
  log(line: string): void;
}

export interface CapabilityProfiler {
  /** True where the CPU latency predictor's models ship: the agent then predicts CPU profiles by default. */
  canPredict(): boolean;
  /**
   * Profiles a function over the grid (batches × quotas), storing each stage through `io`.
   * `model`: the replica's ONNX file to predict from; absent, the whole grid is measured.
   * `sloMs`: the function's latency SLO; with it each stage also carries its <request, limit>.
   */
  profile(io: ProfileIO, grid: { batches: number[]; quotas: number[]; sloMs?: number }, model?: string): Promise<void>;
}
