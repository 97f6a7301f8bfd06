import type Redis from 'ioredis';
import { Lease } from '../../gateway/lib/lease';
import type { LeaderLease } from '../../gateway/providers/kubernetes/kube-lease';
import type { Enforcement, FunctionProvider } from '../../gateway/providers/function-provider';
import { ScalingEvents } from '../../gateway/registry/scaling-events';
import { Forecasts } from '../../gateway/registry/forecasts';
import { ProfileCapability } from '../rapp/profile-capability';
import { describeDims } from '../inference/enforcement';
import { createPolicy } from '../inference/registry';
import type { ClusterView, Decision, DecisionForecast, InferencePolicy, Placement, PolicyParams } from '../inference/types';
import { Actuator, Outcome } from './actuator';
import { Collected, Collector } from './collector';
import { CorrectedCapability } from '../rapp/corrected-capability';
import { correctionStep, LogFactor } from '../rapp/online-correction';
import { decideLive, LiveState } from './decider';
import { enforcedDims, plannable } from './enforced';
import { policySpec, targetReplicas, toObservation } from './observation';
import { zeroAfterMs } from './zero';
import { GUARD_HOLD_S } from '../inference/stages/slo-guard';
import { type Clock, systemClock } from '../../gateway/ports/clock';

/** The platform's one clock (ms; gateway/ports/clock.ts); tests pass their own. */
export { type Clock, systemClock };

export interface LiveAutoscalerOptions {
  /** Registered policy name, e.g. `hybrid`. */
  policy: string;
  params: PolicyParams;
  /** Tick period, ms (1000 live). */
  intervalMs: number;
  /** SLO assumed for functions that set none, ms. */
  defaultSloMs: number;
  /** The node's devices (`cpu0`… on a machine without a GPU: one per core). */
  devices: string[];
  leaseMs?: number;
  /** Who leads (default: a Redis lease; on Kubernetes a Lease object, gateway/providers/kubernetes/kube-lease.ts). */
  leader?: LeaderLease;
  /** Consecutive seconds over the SLO before the SLO guard adds capacity (default 5). */
  sloGuardS?: number;
  /** Seconds the SLO guard's capacity is kept before the policy may take it back (default GUARD_HOLD_S, 11: the online correction's settling time). */
  sloGuardHoldS?: number;
  /** Online correction of the capability model (default on; correction.ts). */
  correction?: boolean;
  /** Called after every tick with what it decided (logs, tests). */
  onTick?: (reports: TickReport[], now: number) => void;
}

/** What one tick did, per function (for tests and logs). */
export interface TickReport {
  fn: string;
  decision?: Decision;
  /** Why nothing was decided (hold), e.g. no usable capability yet. */
  skipped?: string;
  /** What the actuator's provider calls did. */
  outcomes?: Outcome[];
  /** The capability correction factor k in use (1: the profile as measured). */
  factor?: number;
  /** The dimensions planned over: those the provider enforces on this function's replicas (`spatial+temporal`, `temporal`, `none`). */
  planned?: string;
  /** The policy's load forecast this tick, when it gave one (published to gateway/registry/forecasts.ts for the dashboard). */
  forecast?: DecisionForecast;
}

const LOCK = 'mlfaas:autoscaler-lock';

/**
 * The live inference autoscaler, split as Knative's is: every interval the collector reads the
 * inference functions, their replicas and last second's counters; the decider (decider.ts: the
 * registered pure policy, HAS-GPU hybrid by default, with the platform's rules around it) decides;
 * the actuator applies it through the provider and records each change, or its failure, as a
 * scaling event. One leader at a time (a Redis lease, or a Kubernetes Lease on Kubernetes).
 */
export class LiveAutoscaler {
  // never below the measured quotas: the profile's throughput says nothing about the tails there
  private readonly profiles = new ProfileCapability({}, { belowMeasured: 'refuse' });
  private readonly capability = new CorrectedCapability(this.profiles);
  private readonly policy: InferencePolicy<unknown>;
  private readonly states = new Map<string, LiveState>();
  private readonly factors = new Map<string, LogFactor>();
  private readonly profiled = new Map<string, string>();
  private readonly pending = new Map<string, Placement[]>();
  private readonly collector: Collector;
  private readonly actuator: Actuator;
  private readonly forecasts: Forecasts;
  private readonly lease: LeaderLease;
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    redis: Redis,
    private readonly provider: FunctionProvider,
    private readonly opts: LiveAutoscalerOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.policy = createPolicy(opts.policy, opts.params, { capability: this.capability });
    this.collector = new Collector(redis, provider, opts.devices, this.pending);
    this.actuator = new Actuator(provider, new ScalingEvents(redis), this.policy.name);
    this.forecasts = new Forecasts(redis);
    this.lease = opts.leader ?? new Lease(redis, LOCK, opts.leaseMs ?? 5000, async () => undefined, async () => undefined);
  }

  async start(): Promise<void> {
    await this.lease.start();
    this.timer = setInterval(() => {
      if (!this.lease.isHeld || this.running) return;
      this.running = true;
      const now = this.clock.now();
      void this.tick(now)
        .then((r) => this.opts.onTick?.(r, now))
        .catch(() => undefined)
        .finally(() => (this.running = false));
    }, this.opts.intervalMs);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.lease.close();
  }

  /** One decision round over every inference function. */
  async tick(now: number): Promise<TickReport[]> {
    const { items, cluster } = await this.collector.collect(now);
    // what the nodes enforce now (the agent may run in another process): the profile is restricted to it
    const enforced = (await this.provider.declaredEnforcement?.()) ?? this.provider.enforcement();
    const reports: TickReport[] = [];
    for (const it of items) {
      try {
        reports.push(await this.one(it, cluster, now, enforced));
      } catch (e) {
        // one function's failure (deleted mid-tick, Redis error) must not stop the others
        reports.push({ fn: it.fnId, skipped: `error: ${(e as Error).message}` });
      }
    }
    this.prune(new Set(items.map((x) => x.fnId)), new Set(items.flatMap((x) => x.replicas.map((r) => r.id))));
    return reports;
  }

  private async one(it: Collected, cluster: ClusterView, now: number, enforced: Enforcement): Promise<TickReport> {
    const { f, ref, fnId, ml, replicas } = it;
    const outcomes = await this.actuator.initial(ref, replicas, it.initial, now, it.shares);
    const { has: hasProfile, planned } = await this.ensureProfile(it, enforced);
    const zero = zeroAfterMs(ml.minScale, f.labels, f.annotations);
    const spec = { ...policySpec(fnId, ml, this.opts.defaultSloMs), ...(zero !== undefined ? { idleToZeroMs: zero } : {}) };
    const obs = toObservation(it.counters, replicas, cluster, this.opts.intervalMs);
    if (hasProfile && this.opts.correction !== false) {
      // every enforcement here is a budget per period (CFS, tokend windows): an idle replica runs at full speed
      const k = correctionStep(this.factors.get(fnId) ?? 0, fnId, obs, this.profiles, 'full-speed');
      this.factors.set(fnId, k);
      this.capability.setFactor(fnId, k);
    }
    const factor = this.capability.factor(fnId);
    const out = decideLive({
      policy: this.policy,
      spec,
      state: this.states.get(fnId),
      obs,
      now,
      capability: this.capability,
      zeroAfterMs: zero,
      activeNow: it.activeNow,
      pin: it.pin,
      hasProfile,
      desired: f.replicas,
      sloGuardS: this.opts.sloGuardS ?? 5,
      sloGuardHoldS: this.opts.sloGuardHoldS ?? GUARD_HOLD_S,
    });
    const forecast = out.forecast;
    // for display only: a failed write never stops the decision
    if (forecast) await this.forecasts.record(ref, { ...forecast, at: new Date(now).toISOString() }).catch(() => undefined);
    const fc = forecast ? { forecast } : {};
    if (!out.decision) {
      this.states.set(fnId, out.next);
      return { fn: fnId, skipped: out.skipped, outcomes, factor, planned, ...fc };
    }
    const d = out.decision;
    // planned placements wait for the replicas the scale-up starts (at most the surplus asked for)
    if (d.add.length) this.pending.set(fnId, [...(this.pending.get(fnId) ?? []), ...d.add].slice(-Math.max(0, d.replicas - replicas.length)));
    const target = out.pinned !== undefined
      ? Math.min(Math.max(out.pinned, 0), ml.maxScale)
      : targetReplicas(d.replicas, replicas.length, f.replicas, ml.minScale, ml.maxScale);
    outcomes.push(...(await this.actuator.apply(ref, f.replicas, replicas, d, target, now)));
    this.states.set(fnId, out.next); // only once acted on
    return { fn: fnId, decision: d, outcomes, factor, planned, ...fc };
  }

  /** Forgets functions and replicas that are gone (a redeployed function starts afresh). */
  private prune(fns: Set<string>, replicas: Set<string>): void {
    for (const m of [this.states, this.profiled, this.pending, this.factors]) for (const k of m.keys()) if (!fns.has(k)) m.delete(k);
    this.actuator.prune(replicas);
  }

  /**
   * Loads (or refreshes) the function's deploy-time profile into the capability model. After a
   * redeploy the agent profiles the new version once a replica of it is ready (never with
   * profiling off); until then the previous version's profile stays loaded: the decider's
   * capability gate holds the function if it answers 0 for the replicas running.
   */
  private async ensureProfile(it: Collected, enforced: Enforcement): Promise<{ has: boolean; planned?: string }> {
    const p = await this.provider.capability?.(it.ref);
    const good = p?.points.filter((x) => x.latencyMs > 0 && Number.isFinite(x.latencyMs)) ?? [];
    if (!p || good.length === 0) return { has: this.profiled.has(it.fnId) };
    // only what the provider enforces on this function's replicas is planned (as the simulator
    // does): an unenforced dimension is pinned at its whole value
    const dims = enforcedDims(enforced, p.device === 'gpu' ? 'gpu' : 'cpu');
    const planned = describeDims(dims);
    const usable = plannable(good.map((x) => ({ batch: x.batch, smShare: x.smShare, quota: x.quota, latencyMs: x.latencyMs })), dims);
    if ('why' in usable) return { has: false, planned: `${planned} (${usable.why})` };
    // a version's profile may come in stages (predicted from the graph, then from a measured
    // point): each stage is a new profile, and so is a change of what is enforced
    const tag = `${p.version}|${p.source ?? 'measured'}|${planned}`;
    if (this.profiled.get(it.fnId) !== tag) {
      this.profiles.set(it.fnId, usable.points);
      this.profiled.set(it.fnId, tag);
      // a new profile is a new measurement: the correction learnt against the old one restarts
      this.factors.delete(it.fnId);
      this.capability.setFactor(it.fnId, 0);
    }
    return { has: true, planned };
  }
}
