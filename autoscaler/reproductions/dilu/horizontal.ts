import { chooseBatch, fmt, observedRps } from '../../inference/decision-helpers';
import { lazyIn, lazyOut, pushSample } from '../../inference/lazy';
import type { CountStage, ShareStage } from '../../inference/stages/resize';
import type { Capability, ScalingSpec } from '../../inference/types';

/**
 * Dilu's inference profiling (Sec. 3.2, Hybrid Growth Search): the most cost-efficient
 * <SM rate, batch>, i.e. the largest throughput efficacy TE = throughput ÷ SM rate, among the
 * settings whose batch latency meets the SLO (batch doubling, SM rate in the profile's steps, the
 * whole time quota: Dilu's temporal tokens are its vertical scaling, off here). The SM rate is the
 * replica's *request* quota. The fastest setting when none meets the SLO.
 */
export function diluProfile(cap: Capability, spec: ScalingSpec): { smShare: number; batchSize: number } | undefined {
  const g = cap.grid(spec.name);
  let best: { smShare: number; batchSize: number; te: number } | undefined;
  let fastest: { smShare: number; batchSize: number; l: number } | undefined;
  for (const b of g.batches) {
    if (b > spec.maxBatchSize) continue;
    for (const s of g.smShares) {
      const l = cap.latencyMs(spec.name, b, s, 1);
      if (!(l < Infinity)) continue;
      if (b === 1 && (!fastest || l < fastest.l)) fastest = { smShare: s, batchSize: 1, l };
      if (l > spec.sloLatencyMs) continue;
      const te = cap.capability(spec.name, b, s, 1) / s;
      if (!best || te > best.te + 1e-12 || (Math.abs(te - best.te) <= 1e-12 && s < best.smShare)) best = { smShare: s, batchSize: b, te };
    }
  }
  const c = best ?? fastest;
  return c && { smShare: c.smShare, batchSize: c.batchSize };
}

/**
 * Dilu with horizontal scaling only (its lazy scale-out/in without fast vertical scaling). Each
 * replica gets the share Dilu's profiler gives the function (`diluProfile`, `profile: true`,
 * default) or the fixed `smShare`/`quota`/`batchSize` (`profile: false`: HAS-GPU's 0.3 / 0.5,
 * which misses a 2× SLO for resnet152 on every request). A 40 s window of RPS samples;
 * out when ≥ ϕ_out = 20 samples exceed the deployed throughput (to the count the window's mean
 * over-capacity sample needs), in by one when ≥ ϕ_in = 30 samples are below the throughput of
 * n − 1; the window is cleared after each action. `outByOne`: scale out by one instance per action,
 * as the artifact's scaler does (`scheduling/scaler.py`, `Scaler.run`); off by default, the
 * behaviour this port has had (to the count the mean hot sample needs).
 */
export const DILU_DEFAULTS = { windowS: 40, phiOut: 20, phiIn: 30, profile: true, smShare: 0.3, quota: 0.5, batchSize: 1, outByOne: false };

export interface DiluState {
  samples: number[];
}

/** Share stage: Dilu's profiled share (or the fixed one), at the largest profiled batch ≤ its batch. */
export function diluShare(p: typeof DILU_DEFAULTS, cap: Capability): ShareStage {
  const profiled = new Map<string, { slo: number; smShare: number; quota: number; batchSize: number }>();
  const shareOf = (spec: ScalingSpec) => {
    if (!p.profile) return { smShare: p.smShare, quota: p.quota, batchSize: p.batchSize };
    let e = profiled.get(spec.name);
    if (!e || e.slo !== spec.sloLatencyMs) {
      const c = diluProfile(cap, spec);
      e = c
        ? { slo: spec.sloLatencyMs, smShare: c.smShare, quota: 1, batchSize: c.batchSize }
        : { slo: spec.sloLatencyMs, smShare: p.smShare, quota: p.quota, batchSize: p.batchSize };
      profiled.set(spec.name, e);
    }
    return e;
  };
  return {
    configOf(spec) {
      const sh = shareOf(spec);
      const b = chooseBatch(cap, spec.name, Math.min(sh.batchSize, spec.maxBatchSize), sh.smShare, sh.quota, Infinity);
      return { exclusive: false, smShare: sh.smShare, quota: sh.quota, batchSize: b };
    },
  };
}

/** Count stage: Dilu's lazy window out (to the count the window's mean hot sample needs) and in (by one). */
export function diluCount(p: typeof DILU_DEFAULTS, cap: Capability): CountStage<DiluState> {
  return {
    init: () => ({ samples: [] }),
    count(spec, state, obs, _now, cfg) {
      let samples = pushSample(state.samples, observedRps(obs), p, obs.intervalMs / 1000);
      const per = cap.capability(spec.name, cfg.batchSize, cfg.smShare, cfg.quota);
      const n = obs.replicas.length;
      let want = n;
      let why = `dilu-horizontal (s=${cfg.smShare}, q=${cfg.quota}, b=${cfg.batchSize}): ${fmt(per)} req/s per replica, window ${samples.length} s`;
      if (per > 0 && lazyOut(samples, n * per, p)) {
        const hot = samples.filter((s) => s > n * per);
        want = p.outByOne ? n + 1 : Math.max(n + 1, Math.ceil(hot.reduce((a, s) => a + s, 0) / hot.length / per));
        samples = [];
        why += `, ${hot.length} samples above ${fmt(n * per)} req/s`;
      } else if (n > 1 && lazyIn(samples, (n - 1) * per, p)) {
        want = n - 1;
        samples = [];
        why += `, window below ${fmt((n - 1) * per)} req/s`;
      }
      return { want, state: { samples }, reason: why };
    },
  };
}
