/**
 * Per-replica SM shares, actuated (issue 22 item 4), without a GPU or an MPS daemon: on a stub
 * GPU node (`MLFAAS_GPUS=stub:1`) with a stand-in `nvidia-cuda-mps-control` on PATH (a script that
 * records how it was run), the agent starts the "daemon" as the node's GPU uid, and every GPU
 * replica gets the pipe directory and its own share as `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`. When
 * sandboxed (root), GPU replicas of two functions run as that one uid, each with only its own
 * secrets mounted. A new share set through `provider.setSmShare` (the autoscaler's path) starts a
 * replacement at the share, which takes over once ready; the old replica retires, and the cold
 * start is counted. The stub driver ignores MPS: what is checked is what the platform hands the
 * process, as the real driver reads it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Agent, request } from 'undici';
import { GPU_UID } from '../../node-runtime/function-users';
import { mpsDirs } from '../../node-runtime/mps';
import { sandboxUnavailable } from '../../node-runtime/sandbox';
import { tokendBinaryPath } from '../../node-runtime/tokend-process';
import type { Enforcement } from '../../gateway/providers/function-provider';
import { haveCuda, make, stubDir } from '../native/helpers';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const maybe = haveCuda && existsSync(tokendBinaryPath()) ? describe : describe.skip;
const IMAGE = 'mlfaas-test/gpu-fn:latest';
const ns = 'openfaas-fn';

interface FnState {
  pid: number;
  env: Record<string, string | null>;
}

const agents = new Map<string, Agent>();
async function state(r: { url: string; socket?: string }): Promise<FnState> {
  if (!r.socket) return (await (await fetch(r.url)).json()) as FnState;
  if (!agents.has(r.socket)) agents.set(r.socket, new Agent({ connect: { socketPath: r.socket } }));
  return (await (await request('http://localhost/', { dispatcher: agents.get(r.socket) })).body.json()) as FnState;
}

/** The stand-in control program: records its uid, arguments, directories and stdin; exits 0. */
function fakeMpsControl(dir: string): void {
  const script = `#!/bin/sh
log="$CUDA_MPS_LOG_DIRECTORY/fake-control.log"
in=""
[ $# -eq 0 ] && read -r in
echo "uid=$(id -u) args=$* stdin=$in pipe=$CUDA_MPS_PIPE_DIRECTORY" >> "$log"
[ "$1" = -d ] && touch /dev/shm/fake-mps-daemon
`;
  writeFileSync(join(dir, 'nvidia-cuda-mps-control'), script, { mode: 0o755 });
  chmodSync(dir, 0o755); // the GPU uid runs it
}

const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

maybe('SM shares on a stub GPU node with a stand-in MPS control program', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let img: string;
  let bin: string;
  const oldPath = process.env.PATH;
  const sandboxed = !sandboxUnavailable();
  const a = { name: 'share-a', namespace: ns };
  const b = { name: 'share-b', namespace: ns };

  async function deploy(name: string, replicas: number, annotations: Record<string, string>, secrets: string[]) {
    const scale = String(replicas);
    const body = { service: name, image: IMAGE, secrets, labels: { 'com.openfaas.scale.min': scale, 'com.openfaas.scale.max': scale },
      annotations: { 'mlfaas.gpu': '1', ...annotations } };
    expect((await p.json('POST', '/system/functions', body)).status).toBe(202);
    const ready = await eventually(async () => {
      const eps = (await p.gw.provider.endpoints({ name, namespace: ns })).filter((r) => r.state === 'ready');
      return eps.length === replicas ? eps : undefined;
    }, 30000, 100);
    expect(ready).toBeDefined();
    return ready!;
  }

  beforeAll(async () => {
    img = mkdtempSync(join(tmpdir(), 'gpu-share-img-'));
    bin = mkdtempSync(join(tmpdir(), 'fake-mps-'));
    fakeMpsControl(bin);
    process.env.PATH = `${bin}:${oldPath}`; // the agent looks for the control program once, at start
    redis = await testRedis();
    make('test-progs');
    p = await testGateway(redis.url, { MLFAAS_GPUS: 'stub:1' });
    execFileSync('cc', ['-O2', '-D__CUDA_API_VERSION_INTERNAL', '-I/usr/local/cuda/include', '-o', join(img, 'gpu-fn'),
      join(__dirname, 'fixtures', 'gpu-fn.c'), `-L${stubDir}`, '-lcuda', '-lpthread', '-ldl']);
    p.images.put(IMAGE, img, { language: 'c', kind: 'inference', mode: 'http', fprocess: './gpu-fn', health: '/_/health' });
    for (const [name, value] of [['key-a', 'secret of a'], ['key-b', 'secret of b']]) {
      expect((await p.json('POST', '/system/secrets', { name, value })).status).toBeLessThan(300);
    }
  }, 90000);

  afterAll(async () => {
    process.env.PATH = oldPath;
    const dirs = p ? mpsDirs(p.dataDir) : undefined;
    await p?.stop();
    await redis?.stop();
    if (dirs) rmSync(dirname(dirs.pipe), { recursive: true, force: true });
    rmSync(img, { recursive: true, force: true });
    rmSync(bin, { recursive: true, force: true });
  });

  test('the control daemon runs as the GPU uid; enforcement() claims SM shares and time quotas for GPU replicas', async () => {
    const dirs = mpsDirs(p.dataDir);
    const log = readFileSync(join(dirs.log, 'fake-control.log'), 'utf8');
    expect(log).toContain(`uid=${sandboxed ? GPU_UID : process.getuid!()} args=-d stdin= pipe=${dirs.pipe}`);
    // sandboxed: the daemon's /dev/shm is the shared MPS directory its sandboxed clients get too
    if (sandboxed) expect(existsSync(join(dirs.shm!, 'fake-mps-daemon'))).toBe(true);
    const e = p.gw.provider.enforcement();
    expect(e.gpu).toEqual(expect.objectContaining({ smShare: 'mps', timeQuota: 'limiter', memory: 'none' }));
    expect(e.summary).toMatch(/SM share by MPS, fixed at start/);
    const info = (await (await p.get('/system/info')).json()) as { mlfaas: { gpus: string; enforcement: Enforcement } };
    expect(info.mlfaas.gpus).toMatch(/SM share enforced \(MPS/);
    expect(info.mlfaas.enforcement.gpu?.smShare).toBe('mps');
  });

  test('GPU replicas get the pipe directory and their share; sandboxed, two functions share the GPU uid and see only their own secrets', async () => {
    const ra = await deploy(a.name, 1, { 'mlfaas.gpu.sm_share': '0.5' }, ['key-a']);
    const rb = await deploy(b.name, 1, {}, ['key-b']);
    const sa = await state(ra[0]);
    const sb = await state(rb[0]);
    expect(sa.env.CUDA_MPS_PIPE_DIRECTORY).toBe(mpsDirs(p.dataDir).pipe);
    expect(sa.env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).toBe('50');
    expect(sb.env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).toBe('100');
    expect(ra[0].smShare).toBe(0.5);
    expect(rb[0].smShare).toBe(1);
    if (!sandboxed) return;
    expect(uidOf(ra[0].pid!)).toBe(GPU_UID);
    expect(uidOf(rb[0].pid!)).toBe(GPU_UID);
    // each sees its own secrets at /var/openfaas/secrets and nothing of the other's
    const mounts = (pid: number) => readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
    const ma = mounts(ra[0].pid!);
    expect(ma).toMatch(/secrets\/openfaas-fn\/share-a \/var\/openfaas\/secrets /);
    expect(ma).not.toMatch(/share-b/);
    expect(mounts(rb[0].pid!)).not.toMatch(/share-a/);
    // MPS clients share memory with the server through /dev/shm: theirs is the daemon's directory
    for (const pid of [ra[0].pid!, rb[0].pid!]) expect(mounts(pid)).toMatch(/mps-[0-9a-f]{8}\/shm \/dev\/shm /);
    // and the files are the GPU uid's (the uid that reads them), unreadable to any other
    const dir = join(p.dataDir, 'secrets', ns, a.name);
    expect(uidOf(ra[0].pid!)).toBe(GPU_UID);
    const st = execFileSync('stat', ['-c', '%u %a', dir, join(dir, 'key-a')], { encoding: 'utf8' }).trim().split('\n');
    expect(st).toEqual([`${GPU_UID} 500`, `${GPU_UID} 400`]);
  }, 90000);

  test('a new share replaces the replica: the replacement starts at it, takes over once ready, and is counted as a cold start', async () => {
    const [old] = (await p.gw.provider.endpoints(a)).filter((r) => r.state === 'ready');
    await p.gw.provider.setQuota(a, old.id, 0.4);
    await p.gw.provider.setSmShare!(a, old.id, 0.25);
    const next = await eventually(async () => (await p.gw.provider.endpoints(a)).find((r) => r.id !== old.id && r.state === 'ready'), 30000, 50);
    expect(next).toBeDefined();
    expect(next!.smShare).toBe(0.25);
    expect((await state(next!)).env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).toBe('25');
    // the old one retires after the new one is ready; the function never had fewer than one ready
    const gone = await eventually(async () => !(await p.gw.provider.endpoints(a)).some((r) => r.id === old.id), 20000, 50);
    expect(gone).toBe(true);
    expect(p.gw.agent!.local(a).map((r) => r.id)).toEqual([next!.id]);
    // its settings came along: the quota it had, pushed to tokend for the new process
    expect((await p.gw.provider.endpoints(a))[0].quota).toBe(0.4);
    expect(await eventually(() => p.gw.agent!.local(a)[0].quota === 0.4, 10000)).toBe(true);
    expect(p.gw.agent!.shares.started['sm-share']).toBe(1);
    const metrics = await (await p.get('/metrics')).text();
    expect(metrics).toMatch(/mlfaas_replica_cold_starts_total\{function_name="share-a.openfaas-fn",cause="sm-share"\} 1/);
    // the same share again is no replacement
    await p.gw.provider.setSmShare!(a, next!.id, 0.25);
    await new Promise((r) => setTimeout(r, 2500));
    expect(p.gw.agent!.shares.started['sm-share']).toBe(1);
    expect((await p.gw.provider.endpoints(a)).map((r) => r.id)).toEqual([next!.id]);
  }, 60000);

  test('shares outside (0, 1] are refused', async () => {
    const [r] = await p.gw.provider.endpoints(a);
    await expect(p.gw.provider.setSmShare!(a, r.id, 0)).rejects.toThrow(/must be in \(0, 1\]/);
    await expect(p.gw.provider.setSmShare!(a, r.id, 1.5)).rejects.toThrow(/must be in \(0, 1\]/);
  });
});
