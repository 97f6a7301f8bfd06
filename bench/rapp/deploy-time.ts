/**
 * Live: how soon a newly deployed function has a capability profile the autoscaler can decide on,
 * with the whole grid measured (MLFAAS_PROFILE_MODE=measured, the platform before issue 12) and
 * with the latency predictor (predicted). `mlfaas up` with the example functions, once per mode;
 * times from the function's first replica being ready (the profile's start; deploy to ready is
 * the same in both), polled every 25 ms; the predicted profiles compared with the measured one.
 */
import { request } from 'undici';
import { DEFAULT_NAMESPACE } from '../../gateway/lib/names';
import type { CapabilityProfile } from '../../node-runtime/profiler';
import { keys } from '../../gateway/registry/keys';
import { FUNCTIONS, Platform, profileNow, startPlatform } from '../live/platform';

export interface DeployTiming {
  mode: 'measured' | 'predicted';
  fn: string;
  /** s from the first replica ready to the first profile stored (any stage). */
  firstS?: number;
  firstSource?: string;
  /** s to the final profile (measured, or calibrated from a measured point). */
  finalS?: number;
  measuredPoints?: number;
  first?: CapabilityProfile;
  final?: CapabilityProfile;
}

async function readyNow(p: Platform, fn: string): Promise<boolean> {
  const reps = Object.values(await p.redis.hgetall(keys.replicas({ name: fn, namespace: DEFAULT_NAMESPACE })));
  return reps.some((v) => (JSON.parse(v) as { state: string }).state === 'ready');
}

async function timeOne(p: Platform, mode: DeployTiming['mode'], f: (typeof FUNCTIONS)[number]): Promise<DeployTiming> {
  // a function at zero gets its first replica from a request
  if (f.minScale === 0)
    void request(`${p.url}/function/${f.name}`, { method: 'POST', body: f.body(), headers: { 'content-type': 'application/json' }, headersTimeout: 120_000 })
      .then((r) => r.body.dump()).catch(() => undefined);
  const out: DeployTiming = { mode, fn: f.name };
  const end = Date.now() + 180_000;
  let ready: number | undefined;
  while (Date.now() < end) {
    const t = Date.now();
    if (ready === undefined && (await readyNow(p, f.name))) ready = t;
    const prof = await profileNow(p.url, f.name);
    if (prof && ready !== undefined) {
      if (!out.first) Object.assign(out, { first: prof, firstS: (t - ready) / 1000, firstSource: prof.source ?? 'measured' });
      if (prof.source !== 'predicted')
        return Object.assign(out, { final: prof, finalS: (t - ready) / 1000, measuredPoints: prof.measuredPoints ?? prof.points.length });
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return out;
}

/** Both modes, one platform each, the example functions one after the other. */
export async function deployTimes(log: (s: string) => void): Promise<DeployTiming[]> {
  const res: DeployTiming[] = [];
  for (const mode of ['measured', 'predicted'] as const) {
    const p = await startPlatform(`/tmp/bench-rapp-${process.pid}-${mode}`, 'hybrid', { MLFAAS_PROFILE_MODE: mode }, log);
    try {
      for (const f of FUNCTIONS) {
        const r = await timeOne(p, mode, f);
        log(`${mode} ${f.name}: first profile (${r.firstSource}) ${r.firstS?.toFixed(2)} s after ready, final ${r.finalS?.toFixed(2)} s ` +
          `(${r.measuredPoints} points measured)`);
        res.push(r);
      }
    } finally {
      await p.stop();
    }
  }
  return res;
}

/** Mean |a − b| / b of latency over the grid points both profiles have. */
export function profileMape(a: CapabilityProfile, b: CapabilityProfile): number {
  const errs: number[] = [];
  for (const x of a.points) {
    const y = b.points.find((z) => z.batch === x.batch && z.quota === x.quota && z.smShare === x.smShare);
    if (y && y.latencyMs > 0) errs.push(Math.abs(x.latencyMs - y.latencyMs) / y.latencyMs);
  }
  return errs.length ? errs.reduce((s, e) => s + e, 0) / errs.length : NaN;
}
