/**
 * Re-runs bench:live's simulator check from the inputs a run saved (profiles and per-second
 * arrivals), without the live part, and prints each function's simulated allotment over time:
 * `npx tsx bench/live/sim-replay.ts /tmp/bench-live-<pid>-sim-input.json [policy]`.
 */
import { readFileSync } from 'node:fs';
import { simulateSegment } from './sim-check';

const [file, policy = 'hybrid'] = process.argv.slice(2);
if (!file) throw new Error('usage: sim-replay.ts <sim-input.json> [policy]');
const input = JSON.parse(readFileSync(file, 'utf8')) as {
  seconds: number; seed: number; profiles: Record<string, { points: never[] }>; counts: Record<string, Record<string, number[]>>;
};
for (const [seg, counts] of Object.entries(input.counts)) {
  const r = simulateSegment(policy, input.profiles, counts, input.seed, true);
  for (const f of r.functions) {
    const share = f.series!.share;
    const runs: string[] = [];
    for (let i = 0; i < share.length; i++) if (i === 0 || share[i] !== share[i - 1]) runs.push(`${i}s:${share[i].toFixed(2)}×${f.series!.replicas[i]}`);
    console.log(`${seg} ${f.name}: ${f.gpuSeconds.toFixed(1)} core-s, ${f.violations}/${f.requests} misses, cold starts ${f.coldStarts}; allotment ` +
      `${runs.join(' ')}`);
  }
}
