/**
 * Old vs new capability profile of digits-classify on this machine: the replica's `/_/profile`
 * (model time through the batcher, no HTTP/JSON) against the end-to-end profiler (real JSON
 * requests through the replica's HTTP path), at the replica's current allotment.
 * `npx tsx bench/live/profile-compare.ts`
 */
import { request } from 'undici';
import { DEFAULT_NAMESPACE } from '../../gateway/lib/names';
import { profileReplica } from '../../node-runtime/profiler';
import { keys } from '../../gateway/registry/keys';
import { startPlatform } from './platform';

async function main() {
  const p = await startPlatform(`/tmp/bench-live-${process.pid}-profile`, 'hybrid', { MLFAAS_PROFILE_SECONDS: '1' }, (l) => process.stderr.write(`${l}\n`));
  try {
    const end = Date.now() + 120_000;
    let url: string | undefined;
    while (!url && Date.now() < end) {
      const reps = Object.values(await p.redis.hgetall(keys.replicas({ name: 'digits-classify',
        namespace: DEFAULT_NAMESPACE }))).map((v) => JSON.parse(v) as { url: string; state?: string });
      url = reps.find((r) => r.url)?.url;
      if (!url) await new Promise((r) => setTimeout(r, 500));
    }
    if (!url) throw new Error('no digits-classify replica');
    await new Promise((r) => setTimeout(r, 15_000)); // let the deploy-time profile finish first
    const batches = [1, 2, 4, 8, 16];
    const rows: string[] = ['| batch | old /_/profile inst/s | old latency ms | new end-to-end req/s | new latency ms |', '|---|---|---|---|---|'];
    const nw = await profileReplica({ url }, { batches, quotas: [1], seconds: 2 }, async () => undefined, async () => undefined);
    for (const b of batches) {
      const r = await request(`${url}/_/profile`, { method: 'POST', body: JSON.stringify({ batch: b, seconds: 2 }),
        headers: { 'content-type': 'application/json' } });
      const o = (await r.body.json()) as { instancesPerSec: number; latencyMsMean: number };
      const n = nw.find((x) => x.batch === b)!;
      rows.push(`| ${b} | ${Math.round(o.instancesPerSec)} | ${o.latencyMsMean.toFixed(3)} | ${Math.round(n.throughput)} | ${n.latencyMs.toFixed(2)} |`);
    }
    console.log(rows.join('\n'));
  } finally {
    await p.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
