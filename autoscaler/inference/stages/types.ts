/**
 * The hybrid policy as a staged pipeline (DESIGN.md): forecast → SLO model → vertical → horizontal
 * → hysteresis, one small interface per phase, as the Kubernetes scheduler framework has one per
 * extension point; the last stage, the SLO guard, is `PolicyGuard` (../types.ts, ./slo-guard.ts),
 * run by the loop with what it observed. A variant of the policy is a choice of one implementation per stage
 * (`variants.ts`); the pipeline that runs them in order is `../hybrid.ts`. Every stage is pure:
 * `now` (ms) comes in the draft, nothing reads a clock.
 */
import type { ClusterOverlay } from '../cluster';
import type { Member } from '../hybrid-fleet';
import type { HybridParams, HybridState, Replica } from '../hybrid-params';
import type { CapabilityTables } from '../hybrid-tables';
import type { Capability, ScalingSpec, Observation, Placement } from '../types';

/** One decision's working set, filled and changed by the stages in order. */
export interface Draft {
  fn: string;
  spec: ScalingSpec;
  obs: Observation;
  /** ms on the caller's clock. */
  now: number;
  /** The state the decision started from (after the idle run's update). */
  state: HybridState;
  /** Observed arrival rate over the interval, req/s. */
  rps: number;
  /** The rate to provision for, req/s (forecast, plus any lead). */
  R: number;
  /** The function's SLO context (budget, percentile, grids, caches). */
  ctx: CapabilityTables;
  overlay: ClusterOverlay;
  /** The replicas as the policy plans with them (quotas change in place). */
  replicas: Replica[];
  /** The fleet being sized (`replicas` and the replicas added so far), for a fleet-queue SLO model. */
  fleet: Member[];
  /** Capability of the replicas, req/s, as the SLO model counts it. */
  Cf: number;
  /** Capability still missing on a scale-up (per-replica models: R − α·Cf, consumed by vertical then horizontal). */
  dR: number;
  /** At least this many replicas (R_min / min_scale, ≥ 1). */
  floor: number;
  /** Replicas not ready in the observation. */
  notReady: number;
  add: Placement[];
  remove: string[];
  quotas: Map<string, number>;
  notes: string[];
  /** ms of the last scale-down after this decision. */
  nextDown: number | null;
}

/** Forecast: the rate to provision for and the forecaster's next state. */
export interface ForecastStage {
  readonly label: string;
  init(): unknown;
  /** The observed rate folded into the forecaster. */
  observe(pred: unknown, rps: number): unknown;
  /** R (req/s) from the forecaster's state, with the lead it includes and the state it keeps. */
  rate(pred: unknown, state: HybridState, rps: number, obs: Observation): { R: number; lead: number; patch: Partial<HybridState> };
  /** Optional: the forecast's mean and central 80 % band (q0.1, q0.9), req/s, for display; never used to decide. */
  band?(pred: unknown): { mean: number; lo: number; hi: number };
}

/** SLO model: what a replica, or the fleet, serves within the SLO. */
export interface SloModelStage {
  readonly name: string;
  ctxOf(spec: ScalingSpec): CapabilityTables;
  /** One replica's SLO capability at (b, s, q), req/s. */
  capOf(ctx: CapabilityTables, b: number, s: number, q: number): number;
  /** SLO capability of a set of replicas together, req/s. */
  capacity(ctx: CapabilityTables, members: readonly Member[]): number;
}

/** Vertical scale-up: raises quotas of the replicas running. */
export interface VerticalStage {
  up(d: Draft): void;
}

/** Horizontal scaling: replicas up to the floor, then more while the vertical step left a gap. */
export interface HorizontalStage {
  toFloor(d: Draft): void;
  out(d: Draft): void;
}

/** Hysteresis: when and how far capacity comes down, and what holds changes back. */
export interface HysteresisStage {
  /** Scale-down (quotas down, replicas removed) when the load allows it; sets d.nextDown. */
  down(d: Draft): void;
  /** A window that delays adding or removing replicas (Dilu's lazy scaling); returns the kept samples. */
  gate(d: Draft): number[];
  /** State this stage keeps for the next decision. */
  patch(d: Draft): Partial<HybridState>;
}

/** One implementation per stage: a variant of the policy. */
export interface Stages {
  forecast: ForecastStage;
  sloModel: SloModelStage;
  vertical: VerticalStage;
  horizontal: HorizontalStage;
  hysteresis: HysteresisStage;
}

/** What a stage factory gets: the parameters, the capability, the quota levels and the SLO model chosen. */
export interface StageDeps {
  p: HybridParams;
  cap: Capability;
  quotaLevels: number[];
  leadS: number;
}
