/**
 * GPU replicas without a GPU: on a node declared with `MLFAAS_GPUS=stub:2` (the stub
 * libcuda.so.1 stands in for the driver; a "k_1000us" kernel takes 1 ms of a virtual GPU), the
 * real agent starts a function that asks for a GPU (`mlfaas.gpu: "1"`) with the native limiter
 * preloaded against tokend's window of its own GPU. The function (fixtures/gpu-fn.c, run as the
 * replica's process) loops kernel launches and reports its launch count; its device share
 * (launches × 1 ms per wall second) follows quotas set through `provider.setQuota`, the path the
 * autoscaler uses, and tokend lists its pid on its device with that quota.
 *
 * Bounds: tokend never grants more than the limit per window (the upper bounds hold on any host;
 * +0.06 for measurement edges and the overdraft one synchronize of 4 launches carries over); the
 * lower bounds are 0.7× the quota on a quiet host, and 0.4× when every one of 3 attempts saw the
 * host take more than 10% of a launcher's time (a busy 2-core host delays its wake-ups; seen:
 * 0.172/0.511 for 0.3/0.9 beside other suites). The swap of quotas between the two replicas is
 * asserted relatively (≥ 1.5×), which uniform host interference does not change.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createTokendControl, TokendControl } from '../../node-runtime/tokend-control';
import { tokendBinaryPath } from '../../node-runtime/tokend-process';
import { limiterLibraryPath } from '../../node-runtime/gpu-node';
import { SANDBOX_PATHS, sandboxUnavailable } from '../../node-runtime/sandbox';
import { haveCuda, make, stubDir } from '../native/helpers';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const maybe = haveCuda && existsSync(tokendBinaryPath()) ? describe : describe.skip;
const IMAGE = 'mlfaas-test/gpu-fn:latest';
const KERNEL_NS = 1e6;

/** What gpu-fn answers. */
interface FnState {
  pid: number;
  launches: number;
  monoNs: number;
  limiter: { launches: number; throttled: number; throttledNs: number; connects: number; failopen: number; grants: number; chargedNs: number } | null;
  env: Record<string, string | null>;
}

/** A replica as the test reaches it: sandboxed, only through its socket (its port is in its own network namespace). */
interface Target {
  url: string;
  socket?: string;
  /** Its process on the host (tokend's client pid); a sandboxed function sees itself as pid 2. */
  pid?: number;
}
const agents = new Map<string, Agent>();
const state = async (t: Target): Promise<FnState> => {
  if (!t.socket) return (await (await fetch(t.url)).json()) as FnState;
  if (!agents.has(t.socket)) agents.set(t.socket, new Agent({ connect: { socketPath: t.socket } }));
  return (await (await request('http://localhost/', { dispatcher: agents.get(t.socket) })).body.json()) as FnState;
};

/**
 * The image: gpu-fn built against the stub driver (no rpath: the platform's LD_LIBRARY_PATH finds it).
 * The stub driver itself is built before the gateway starts: it looks for it once, at start.
 */
function buildImage(p: TestPlatform, dir: string): void {
  execFileSync('cc', ['-O2', '-D__CUDA_API_VERSION_INTERNAL', '-I/usr/local/cuda/include', '-o', join(dir, 'gpu-fn'),
    join(__dirname, 'fixtures', 'gpu-fn.c'), `-L${stubDir}`, '-lcuda', '-lpthread', '-ldl']);
  p.images.put(IMAGE, dir, { language: 'c', kind: 'inference', mode: 'http', fprocess: './gpu-fn', health: '/_/health' });
}

async function deploy(p: TestPlatform, name: string, replicas: number): Promise<Array<{ id: string; pid: number; url: string; socket?: string }>> {
  const scale = String(replicas);
  const body = { service: name, image: IMAGE, labels: { 'com.openfaas.scale.min': scale, 'com.openfaas.scale.max': scale },
    annotations: { 'mlfaas.gpu': '1' } };
  expect((await p.json('POST', '/system/functions', body)).status).toBe(202);
  const ref = { name, namespace: 'openfaas-fn' };
  const ready = await eventually(async () => {
    const eps = (await p.gw.provider.endpoints(ref)).filter((r) => r.state === 'ready');
    return eps.length === replicas ? eps : undefined;
  }, 30000, 100);
  if (!ready) {
    // why not: what the agent lists and what the replicas printed (their logs end with the cause)
    const eps = await p.gw.provider.endpoints(ref);
    const logs = await (await p.get(`/system/logs?name=${name}&tail=40`)).text();
    console.log(`${name} not ready after 30 s: ${JSON.stringify(eps)}\n${logs}`);
  }
  expect(ready).toBeDefined();
  return ready!.map((r) => ({ id: r.id, pid: r.pid!, url: r.url, socket: r.socket }));
}

/** tokend's client for this pid, once it shows `limit` (the quota the agent pushed). */
async function tokendClient(ctl: TokendControl, pid: number, limit: number) {
  return eventually(async () => (await ctl.stats()).clients.find((c) => c.pid === pid && Math.abs(c.limit - limit) < 1e-6), 10000, 50);
}

/**
 * Device share of each replica over `ms`: from its own launch count (launches × 1 ms of stub GPU
 * time per wall second) and from the limiter's accounting (GPU time it charged to the grants);
 * `lost`: the fraction of wall time its launcher spent neither in kernels nor waiting for tokens
 * (waiting for a CPU of a busy host).
 */
async function shares(ctl: TokendControl, urls: Target[], ms: number): Promise<{ launched: number[]; charged: number[]; reported: number[]; lost: number[];
  missed: number; }> {
  const s0 = await ctl.stats();
  const t0 = process.hrtime.bigint();
  const a = await Promise.all(urls.map(state));
  await new Promise((r) => setTimeout(r, ms));
  const b = await Promise.all(urls.map(state));
  const s1 = await ctl.stats();
  const wall = (i: number) => b[i].monoNs - a[i].monoNs;
  const launched = a.map((x, i) => ((b[i].launches - x.launches) * KERNEL_NS) / wall(i));
  return {
    launched,
    charged: a.map((x, i) => (b[i].limiter!.chargedNs - x.limiter!.chargedNs) / wall(i)),
    // what the limiter reported to tokend as used (tokend's policy reads it as demand)
    reported: a.map((x, i) => {
      const pid = urls[i].pid ?? x.pid;
      const used = (s: typeof s0) => s.clients.find((c) => c.pid === pid)?.usedNs ?? NaN;
      return (used(s1) - used(s0)) / wall(i);
    }),
    lost: a.map((x, i) => 1 - launched[i] - (b[i].limiter!.throttledNs - x.limiter!.throttledNs) / wall(i)),
    missed: 1 - ((s1.windowSeq - s0.windowSeq) * s0.windowNs) / Number(process.hrtime.bigint() - t0),
  };
}

/**
 * Measures again (at most 3 times) while the host interfered: took more than 10% of a launcher's
 * time, or of tokend's (windows it did not run on time, whose grants came late: the launchers
 * count that as waiting for tokens).
 */
async function quietShares(ctl: TokendControl, urls: Target[], ms: number): Promise<Awaited<ReturnType<typeof shares>> & { quiet: boolean }> {
  for (let i = 1; ; i++) {
    const s = await shares(ctl, urls, ms);
    const worst = Math.max(...s.lost, s.missed);
    if (worst <= 0.1) return { ...s, quiet: true };
    console.log(`attempt ${i}: host interference ${worst.toFixed(3)} (launchers ${s.lost.map((x) => x.toFixed(3)).join('/')}, tokend ` +
      `missed ${s.missed.toFixed(3)})${i < 3 ? ', measuring again' : ''}`);
    if (i >= 3) return { ...s, quiet: false };
  }
}

maybe('GPU replicas on a stub GPU node (agent, limiter, tokend; sandboxed when root)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let img: string;
  let ctl: TokendControl;
  let reps: Array<{ id: string; pid: number; url: string; socket?: string }>;
  const ref = { name: 'gpu-fn', namespace: 'openfaas-fn' };
  const sandboxed = !sandboxUnavailable();

  beforeAll(async () => {
    img = mkdtempSync(join(tmpdir(), 'gpu-node-img-'));
    redis = await testRedis();
    make('test-progs'); // before the gateway: MLFAAS_GPUS=stub:N finds no GPUs without the stub driver
    p = await testGateway(redis.url, { MLFAAS_GPUS: 'stub:2' });
    ctl = createTokendControl(p.gw.tokend!.controlPath);
    buildImage(p, img);
    reps = await deploy(p, 'gpu-fn', 2);
  }, 90000);

  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
    rmSync(img, { recursive: true, force: true });
  });

  test('each replica gets its own GPU, the limiter preloaded, and is on its device in tokend', async () => {
    const info = (await (await p.get('/system/info')).json()) as { mlfaas: { gpus: string } };
    expect(info.mlfaas.gpus).toMatch(/^stub: gpu0 .*gpu1 .*temporal quota enforced.*SM share not enforced/);
    const devices = new Set<string>();
    for (const r of reps) {
      const s = await state(r);
      // the replica's process is the one launching kernels (sandboxed: pid 2 of its own namespace,
      // the first process its init starts; r.pid is that process on the host, tokend's client)
      expect(s.pid).toBe(r.socket ? 2 : r.pid);
      const dev = s.env.TL_DEVICE!;
      devices.add(dev);
      expect(s.env.CUDA_VISIBLE_DEVICES).toBe(`GPU-stub-${dev}`);
      expect(s.env.LD_PRELOAD).toBe(sandboxed ? join(SANDBOX_PATHS.platform, 'native/build/liblimiter.so') : limiterLibraryPath());
      expect(s.env.TL_TOKEND_SOCKET).toBe(sandboxed ? join(SANDBOX_PATHS.tokend, 'tokend.sock') : p.gw.tokend!.socketPath);
      expect(s.env.LD_LIBRARY_PATH!.split(':')[0]).toBe(sandboxed ? join(SANDBOX_PATHS.platform, 'native/build/stub') : stubDir);
      expect(s.env.CUDA_MPS_PIPE_DIRECTORY).toBeNull(); // no MPS control daemon on a stub node
      // the limiter is loaded, connected and metering: its launch count is the program's
      expect(s.limiter).not.toBeNull();
      expect(s.limiter!.connects).toBeGreaterThanOrEqual(1);
      expect(s.limiter!.failopen).toBe(0);
      expect(s.limiter!.launches).toBeGreaterThan(0); // its counters are flushed every 16 launches per thread
      expect(Math.abs(s.limiter!.launches - s.launches)).toBeLessThanOrEqual(64);
      // tokend: this pid on gpu<dev>, with the quota the agent pushed when it became ready (1)
      const c = await tokendClient(ctl, r.pid, 1);
      expect(c).toBeDefined();
      expect(c!.device).toBe(`gpu${dev}`);
      expect(c!.launches).toBeGreaterThan(0);
    }
    expect([...devices].sort()).toEqual(['0', '1']); // spread over the node's GPUs
    // and through the gateway, as any caller reaches it
    const res = await fetch(`${p.gw.url}/function/gpu-fn`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(200);
    const through = (await res.json()) as FnState;
    if (reps[0].socket) expect(reps.map((r) => r.id)).toContain(through.env.MLFAAS_REPLICA_ID);
    else expect(reps.map((r) => r.pid)).toContain(through.pid);
  });

  test('the measured device share follows quotas set through provider.setQuota', async () => {
    const [a, b] = reps;
    const phase = async (qa: number, qb: number) => {
      await p.gw.provider.setQuota(ref, a.id, qa);
      await p.gw.provider.setQuota(ref, b.id, qb);
      // the agent pushed them to tokend's gpu windows (a mechanism check, before any timing)
      expect(await tokendClient(ctl, a.pid, qa)).toBeDefined();
      expect(await tokendClient(ctl, b.pid, qb)).toBeDefined();
      expect(p.gw.agent!.local(ref).find((r) => r.id === a.id)!.quota).toBe(qa);
      await new Promise((r) => setTimeout(r, 300)); // a few windows under the new grant
      const s = await quietShares(ctl, [a, b], 2500);
      console.log(`quotas ${qa}/${qb}: share by launches ${s.launched.map((x) => x.toFixed(3)).join('/')}, charged by the ` +
        `limiter ${s.charged.map((x) => x.toFixed(3)).join('/')}, reported to tokend ${s.reported.map((x) => x.toFixed(3)).join('/')}, ` +
        `host-lost ${s.lost.map((x) => x.toFixed(3)).join('/')}, tokend missed ${s.missed.toFixed(3)}`);
      return s;
    };
    const one = await phase(0.3, 0.9);
    const two = await phase(0.9, 0.3); // swapped: each replica's share follows its own quota
    const low = [one.launched[0], two.launched[1]];
    const high = [one.launched[1], two.launched[0]];
    // a quiet host lets each replica reach most of its quota; a disturbed one, 0.4× of it
    const reach = one.quiet && two.quiet ? 0.7 : 0.4;
    for (const s of low) {
      expect(s).toBeLessThanOrEqual(0.36);
      expect(s).toBeGreaterThanOrEqual(reach * 0.3);
    }
    for (const s of high) {
      expect(s).toBeLessThanOrEqual(0.96);
      expect(s).toBeGreaterThanOrEqual(reach * 0.9);
    }
    expect(two.launched[0]).toBeGreaterThan(1.5 * one.launched[0]); // a: 0.3 → 0.9
    expect(two.launched[1]).toBeLessThan(one.launched[1] / 1.5); // b: 0.9 → 0.3
    // the limiter's own accounting (GPU time charged against tokend's grants) agrees
    for (const s of [one.charged[0], two.charged[1]]) expect(s).toBeLessThanOrEqual(0.36);
    for (const s of [one.charged[1], two.charged[0]]) expect(s).toBeGreaterThan(1.5 * Math.max(one.charged[0], two.charged[1]));
    // and tokend hears that use (it once heard the refilled window's: 0.02-0.16 for 0.3 and 0.9)
    for (const s of [one, two]) for (let i = 0; i < 2; i++) expect(Math.abs(s.reported[i] - s.charged[i])).toBeLessThan(0.15);
  }, 60000);
});

maybe('GPU replicas without isolation (MLFAAS_ISOLATION=off: host paths, LD_PRELOAD in the env)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let img: string;

  beforeAll(async () => {
    img = mkdtempSync(join(tmpdir(), 'gpu-node-img-'));
    redis = await testRedis();
    make('test-progs');
    p = await testGateway(redis.url, { MLFAAS_GPUS: 'stub:1', MLFAAS_ISOLATION: 'off' });
    buildImage(p, img);
  }, 90000);

  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
    rmSync(img, { recursive: true, force: true });
  });

  test('the replica runs under the limiter on gpu0 and its quota holds', async () => {
    const [r] = await deploy(p, 'gpu-plain', 1);
    // the limiter connects to tokend at its first launch: on a busy host that can come after ready (CI saw 0)
    let s = await state(r);
    for (let i = 0; i < 50 && !((s.limiter?.connects ?? 0) >= 1); i++) {
      await new Promise((res) => setTimeout(res, 100));
      s = await state(r);
    }
    expect(s.env.LD_PRELOAD).toBe(limiterLibraryPath());
    expect(s.env.TL_TOKEND_SOCKET).toBe(p.gw.tokend!.socketPath);
    expect(s.env.LD_LIBRARY_PATH!.split(':')[0]).toBe(stubDir);
    expect(s.env.TL_DEVICE).toBe('0');
    expect(s.limiter?.connects).toBeGreaterThanOrEqual(1);
    const ctl = createTokendControl(p.gw.tokend!.controlPath);
    await p.gw.provider.setQuota({ name: 'gpu-plain', namespace: 'openfaas-fn' }, r.id, 0.3);
    const c = await tokendClient(ctl, r.pid, 0.3);
    expect(c?.device).toBe('gpu0');
    await new Promise((res) => setTimeout(res, 200));
    const m = await shares(ctl, [r], 1500);
    console.log(`unsandboxed, quota 0.3: share by launches ${m.launched[0].toFixed(3)}`);
    expect(m.launched[0]).toBeLessThanOrEqual(0.36);
    expect(m.launched[0]).toBeGreaterThanOrEqual(0.12);
  });

  test('a function that asks for no GPU gets none of it', async () => {
    const body = { service: 'cpu-only', image: 'ghcr.io/openfaas/alpine:latest', envProcess: 'env' };
    expect((await p.json('POST', '/system/functions', body)).status).toBe(202);
    const out = await eventually(async () => {
      const res = await fetch(`${p.gw.url}/function/cpu-only`, { method: 'POST', body: '' });
      return res.status === 200 ? res.text() : undefined;
    }, 30000, 100);
    expect(out).toMatch(/MLFAAS_REPLICA_ID=/);
    expect(out).not.toMatch(/^(LD_PRELOAD|TL_DEVICE|CUDA_VISIBLE_DEVICES)=/m);
  });
});
