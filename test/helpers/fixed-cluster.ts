/**
 * What the fixed-cluster mode's live tests share (issue 24): a Node function that burns
 * `BURN_MS` of CPU per request in one thread (0: answers at once), deployed as several functions
 * on a test platform, optionally with an SLO and a seeded capability profile, and a wait until
 * each has a replica available.
 */
import { profileKey } from '../../node-runtime/profiler';
import { seedImage } from './images';
import { eventually, type TestPlatform } from './platform';

export const NS = 'openfaas-fn';

/** The function's server: `/_/ready` and `/_/health`, and `BURN_MS` (default 10) of busy CPU per request. */
export const BURN_SERVER = `
const http = require('http');
const server = http.createServer((req, res) => {
  if (req.url === '/_/ready' || req.url === '/_/health') return res.writeHead(200).end('ok');
  req.resume();
  req.on('end', () => {
    const until = Date.now() + Number(process.env.BURN_MS || 10);
    let x = 0;
    while (Date.now() < until) x++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ x }));
  });
});
server.listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export interface BurnFunctions {
  readonly image: string;
  readonly fns: readonly string[];
  readonly maxScale: number;
  /** CPU per request, ms (the server's default: 10). */
  readonly burnMs?: string;
  /** `mlfaas.slo.latency_ms` at p99 (absent: no SLO annotations). */
  readonly sloMs?: number;
  /** Seed each function's capability profile at 100 ms per request at quota 1 (the demand the controller sees is the test's). */
  readonly seedProfile?: boolean;
}

/** Seeds the burn image and deploys `fns` from it (each 202). */
export async function deployBurnFunctions(p: TestPlatform, o: BurnFunctions): Promise<void> {
  seedImage(p.images, o.image, { 'server.js': BURN_SERVER },
    { language: 'node', kind: 'inference', mode: 'http', fprocess: 'node server.js', readiness: '/_/ready', health: '/_/health' });
  for (const service of o.fns) {
    const dep = { service, image: o.image, ...(o.burnMs !== undefined ? { envVars: { BURN_MS: o.burnMs } } : {}),
      labels: { 'com.openfaas.scale.min': '1', 'com.openfaas.scale.max': String(o.maxScale) },
      ...(o.sloMs !== undefined ? { annotations: { 'mlfaas.slo.latency_ms': String(o.sloMs), 'mlfaas.slo.percentile': '99' } } : {}) };
    const r = await p.json('POST', '/system/functions', dep);
    if (r.status !== 202) throw new Error(`deploying ${service}: ${r.status}`);
    if (!o.seedProfile) continue;
    await p.gw.redis.set(profileKey({ name: service, namespace: NS }), JSON.stringify({
      function: `${service}.${NS}`, version: 'seeded-by-test', measuredAt: new Date().toISOString(), device: 'cpu',
      points: [1, 0.5, 0.25].map((quota) => ({ batch: 1, quota, smShare: 1, throughput: (1000 * quota) / 100, latencyMs: 100 / quota })),
    }));
  }
}

/** True once every function of `fns` has a replica available (within `ms`). */
export function allAvailable(p: TestPlatform, fns: readonly string[], ms = 45000): Promise<boolean> {
  return eventually(async () => {
    for (const fn of fns) if (((await p.gw.provider.get({ name: fn, namespace: NS }))?.availableReplicas ?? 0) < 1) return false;
    return true;
  }, ms, 200);
}
