/**
 * The open-loop client (issue 24): every request of the schedule is sent at its time whatever
 * the earlier ones are doing, its latency measured at the client. Bounded: a request times out
 * after `timeoutMs` (a failure, counted as infinitely late) and the run waits at most that long
 * after the last send.
 */
import { Pool } from 'undici';
import type { Arrival } from './arrivals';
import type { Outcome } from './utility';

export async function drive(url: string, paths: string[], body: string, plan: Arrival[], timeoutMs: number): Promise<Outcome[]> {
  const pool = new Pool(url, { connections: 128, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connect: { timeout: timeoutMs } });
  const out: Array<Outcome | undefined> = plan.map(() => undefined);
  const pending: Array<Promise<void>> = [];
  const t0 = performance.now();
  const send = async (a: Arrival, k: number) => {
    // latency from the scheduled arrival (open loop: a late send counts against the run)
    const s = t0 + a.t * 1000;
    try {
      const r = await pool.request({ path: paths[a.fn], method: 'POST', body, headers: { 'content-type': 'application/json' } });
      await r.body.dump();
      out[k] = { fn: a.fn, t: a.t, status: r.statusCode, ...(r.statusCode === 200 ? { ms: performance.now() - s } : {}) };
    } catch {
      out[k] = { fn: a.fn, t: a.t, status: 0 };
    }
  };
  let i = 0;
  while (i < plan.length) {
    const now = (performance.now() - t0) / 1000;
    while (i < plan.length && plan[i].t <= now) {
      pending.push(send(plan[i], i));
      i++;
    }
    if (i < plan.length) await new Promise((ok) => setTimeout(ok, Math.max(1, Math.min(20, (plan[i].t - now) * 1000))));
  }
  await Promise.race([Promise.all(pending), new Promise((ok) => setTimeout(ok, timeoutMs + 5000))]);
  // a request still open past the bound is a failure (infinitely late)
  const res = out.map((o, k) => o ?? { fn: plan[k].fn, t: plan[k].t, status: 0 });
  await pool.destroy().catch(() => undefined);
  return res;
}
