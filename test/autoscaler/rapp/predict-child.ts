/**
 * Runs the latency model outside the test runner's sandbox (see latency-model.ts) and prints what
 * the test asserts on, as one JSON line: `tsx predict-child.ts MODEL`.
 */
import { ProfileCapability } from '../../../autoscaler/rapp/profile-capability';
import { LatencyModel } from '../../../autoscaler/rapp/latency-model';
import { predictProfile } from '../../../autoscaler/rapp/predicted-profile';

async function main(): Promise<void> {
  const m = await LatencyModel.load(process.argv[2]);
  const feats = (b: number, _s: number, q: number) => [Math.log(b), Math.log(q)];
  const rows = Array.from(await m.predictMs([feats(1, 1, 1), feats(4, 1, 0.5), feats(8, 1, 0.1)]));
  const empty = (await m.predictMs([])).length;
  let ragged = '';
  await m.predictMs([[0, 0], [0]]).catch((e: Error) => (ragged = e.message));
  const pts = await predictProfile(m, { batches: [1, 2, 4], smShares: [0.5, 1], quotas: [0.25, 0.5, 1] }, feats);
  const cap = new ProfileCapability({ f: pts });
  let missing = '';
  await LatencyModel.load(`${process.argv[2]}.missing`).catch((e: Error) => (missing = e.message));
  console.log(JSON.stringify({ rows, empty, ragged, pts, capLat: cap.latencyMs('f', 2, 0.5, 0.5), capRps: cap.capability('f', 4, 1, 1), missing }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
