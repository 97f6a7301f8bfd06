import { cpus } from 'node:os';
import { simulate, SimResult } from '../../autoscaler/sim/engine';
import { ProfileCapability } from '../../autoscaler/rapp/profile-capability';
import { CFS_PERIOD_US } from '../../node-runtime/cpu-values';
import { FUNCTIONS, ZERO_S } from './platform';

/**
 * bench:live's simulator check for one policy and one segment: the simulator given this machine's
 * measured profiles and the segment's per-second arrivals, configured as the live platform runs:
 * devices = cores, the live capability (no quota under the smallest measured), quotas served as
 * CFS bandwidth at the provider's period, the live loop's online correction, the heavy function's
 * scale to zero (at zero when the segment starts, as live), 3 s cold starts.
 */
export function simulateSegment(policy: string, profiles: Record<string, { points: never[] }>, counts: Record<string, number[]>, seed: number,
  record = false): SimResult {
  const fns = FUNCTIONS.filter((f) => profiles[f.name]).map((f) => ({
    spec: { name: f.name, minScale: f.minScale, maxScale: f.maxScale, sloLatencyMs: f.sloMs, sloPercentile: f.percentile, maxBatchSize: f.maxBatch,
      ...(f.minScale === 0 ? { idleToZeroMs: ZERO_S * 1000 } : {}) },
    model: f.name,
    counts: counts[f.name],
    intervalS: 1,
    // live, the bench waits for the heavy function to be back at zero before each measured window,
    // so its first start is a cold start inside the window, as here
    warmAtStart: false,
  }));
  const cap = new ProfileCapability(Object.fromEntries(fns.map((f) => [f.model, profiles[f.model].points])), { belowMeasured: 'refuse' });
  return simulate(fns, { policy, capability: cap, coldStartS: 3, gpuLimit: cpus().length, seed, record, cfsPeriodMs: CFS_PERIOD_US / 1000, correction: true });
}
