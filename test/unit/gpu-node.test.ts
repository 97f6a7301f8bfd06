/**
 * The pure parts of GPU nodes: nvidia-smi parsing, MLFAAS_GPUS, how a function asks for a GPU,
 * device placement, the env a GPU replica gets (sandboxed or not, with and without MPS), the MPS
 * control daemon's command lines, and the sandbox's last-exec LD_PRELOAD.
 */
import { join } from 'node:path';
import { loadConfig, REPO_ROOT } from '../../gateway/config';
import { describeGpus, GpuNodeSetup, GpuReplicas, gpuReplicaEnv, pickGpu, TL_TIMEOUT_MS } from '../../node-runtime/gpu-replica';
import { discoverGpus, Gpu, GpuNode, NVIDIA_SMI_ARGS, parseGpuSetting, parseNvidiaSmi, STUB_DRIVER_DIR, stubGpus } from '../../node-runtime/gpus';
import { gpuQuotaPusher, mpsUnusable } from '../../node-runtime/gpu-node';
import { mpsCommands, mpsDirs } from '../../node-runtime/mps';
import { SANDBOX_PATHS, sandboxArgv } from '../../node-runtime/sandbox';
import { parseDeployment, parseMlSpec } from '../../gateway/registry/function-spec';

/** As an H100 node's `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader` prints it. */
const SMI = `0, GPU-8a5b3c1e-1f2d-4e5a-9b7c-0d1e2f3a4b5c, NVIDIA H100 80GB HBM3, 81559 MiB
1, GPU-1b2c3d4e-5f60-4718-a9b0-c1d2e3f4a5b6, NVIDIA H100 80GB HBM3, 81559 MiB
`;

const gpus: Gpu[] = parseNvidiaSmi(SMI);
const spec = (annotations: Record<string, string> = {}) => parseDeployment({ service: 'f', image: 'img', annotations });

describe('GPU discovery', () => {
  test('nvidia-smi csv → GPUs (index, uuid, name, MiB), with or without units, names with commas', () => {
    expect(gpus).toEqual([
      { index: 0, uuid: 'GPU-8a5b3c1e-1f2d-4e5a-9b7c-0d1e2f3a4b5c', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 },
      { index: 1, uuid: 'GPU-1b2c3d4e-5f60-4718-a9b0-c1d2e3f4a5b6', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 },
    ]);
    expect(parseNvidiaSmi('1, GPU-b, Tesla T4, 15360\n0, GPU-a, Odd, Name, 100 MiB\n')).toEqual([
      { index: 0, uuid: 'GPU-a', name: 'Odd, Name', memoryMiB: 100 },
      { index: 1, uuid: 'GPU-b', name: 'Tesla T4', memoryMiB: 15360 },
    ]);
    expect(parseNvidiaSmi('')).toEqual([]);
    expect(() => parseNvidiaSmi('No devices were found')).toThrow(/unexpected line/);
    expect(() => parseNvidiaSmi('x, GPU-a, T4, 1 MiB')).toThrow(/unexpected line/);
  });

  test('the query asks for exactly what is parsed', () => {
    expect(NVIDIA_SMI_ARGS).toEqual(['--query-gpu=index,uuid,name,memory.total', '--format=csv,noheader']);
  });

  test('MLFAAS_GPUS: auto (default), off, stub:N; anything else names the variable', () => {
    expect(parseGpuSetting(undefined)).toEqual({ kind: 'auto' });
    expect(parseGpuSetting('auto')).toEqual({ kind: 'auto' });
    expect(parseGpuSetting('off')).toEqual({ kind: 'off' });
    expect(parseGpuSetting('0')).toEqual({ kind: 'off' });
    expect(parseGpuSetting('stub:2')).toEqual({ kind: 'stub', count: 2 });
    for (const bad of ['stub:0', 'stub:17', 'stub', 'gpu:1', '2']) expect(() => parseGpuSetting(bad)).toThrow(/MLFAAS_GPUS/);
    expect(loadConfig({ MLFAAS_GPUS: 'stub:1' }).gpus).toEqual({ kind: 'stub', count: 1 });
    expect(() => loadConfig({ MLFAAS_GPUS: 'lots' })).toThrow(/MLFAAS_GPUS="lots"/);
  });

  test('discoverGpus: off runs nothing; a failing nvidia-smi is no GPU, with the reason', () => {
    const never = () => {
      throw new Error('must not run');
    };
    expect(discoverGpus({ kind: 'off' }, never)).toEqual({ source: 'none', gpus: [], note: 'MLFAAS_GPUS=off' });
    const stub = discoverGpus({ kind: 'stub', count: 2 }, never);
    expect(stub.gpus.map((g) => g.uuid)).toEqual(stub.source === 'stub' ? ['GPU-stub-0', 'GPU-stub-1'] : []);
    if (stub.source === 'stub') expect(stub.stubDriverDir).toBe(STUB_DRIVER_DIR);
    else expect(stub.note).toMatch(/make -C native test-progs/);
    const auto = { kind: 'auto' } as const;
    const smi = () => '/usr/bin/nvidia-smi';
    const ran: string[][] = [];
    expect(discoverGpus(auto, (bin, args) => (ran.push([bin, ...args]), SMI), smi)).toEqual({ source: 'nvidia-smi', gpus });
    expect(ran).toEqual([['/usr/bin/nvidia-smi', ...NVIDIA_SMI_ARGS]]);
    expect(discoverGpus(auto, never, () => undefined)).toEqual({ source: 'none', gpus: [], note: 'no nvidia-smi on PATH' });
    expect(discoverGpus(auto, () => '', smi).note).toBe('nvidia-smi lists no GPU');
    const failing = () => {
      throw new Error('Command failed: nvidia-smi\nNVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver');
    };
    expect(discoverGpus(auto, failing, smi)).toEqual({ source: 'none', gpus: [], note: 'nvidia-smi failed: Command failed: nvidia-smi' });
  });
});

describe('how a function asks for a GPU', () => {
  test('mlfaas.gpu (0 or 1) and mlfaas.gpu.sm_share in (0, 1], labels or annotations', () => {
    expect(parseMlSpec({}, {})).not.toHaveProperty('gpus');
    expect(parseMlSpec({ 'mlfaas.gpu': '1' }, {})).toEqual(expect.objectContaining({ gpus: 1 }));
    expect(parseMlSpec({}, { 'mlfaas.gpu': '0' })).not.toHaveProperty('gpus');
    expect(parseMlSpec({}, { 'mlfaas.gpu': '1', 'mlfaas.gpu.sm_share': '0.25' })).toEqual(expect.objectContaining({ gpus: 1, gpuSmShare: 0.25 }));
    expect(() => parseMlSpec({ 'mlfaas.gpu': '2' }, {})).toThrow(/labels\.mlfaas\.gpu: 2 is above the maximum 1/);
    expect(() => parseMlSpec({}, { 'mlfaas.gpu.sm_share': '1.5' })).toThrow(/annotations\.mlfaas\.gpu\.sm_share/);
    expect(() => parseMlSpec({}, { 'mlfaas.gpu.sm_share': '0' })).toThrow(/must be in \(0, 1\]/);
  });

  test('the variables the platform sets for it cannot be set by the function', () => {
    for (const k of ['LD_PRELOAD', 'TL_DEVICE', 'TL_TOKEND_SOCKET', 'CUDA_MPS_ACTIVE_THREAD_PERCENTAGE', 'CUDA_MPS_PIPE_DIRECTORY']) {
      expect(() => parseDeployment({ service: 'f', image: 'img', envVars: { [k]: 'x' } })).toThrow(/set by the platform/);
    }
  });
});

describe('GPU replica environment', () => {
  const node: GpuNode = { source: 'nvidia-smi', gpus };
  const setup: GpuNodeSetup = { node, limiter: join(REPO_ROOT, 'native/build/liblimiter.so'), tokendSocket: '/data/tokend/tokend.sock',
    mpsPipeDir: '/run/mlfaas/mps-1/pipe' };

  test('pickGpu: the least used, lowest index on ties', () => {
    expect(pickGpu(gpus, []).index).toBe(0);
    expect(pickGpu(gpus, [0]).index).toBe(1);
    expect(pickGpu(gpus, [0, 1, 1]).index).toBe(0);
  });

  test('unsandboxed on a real GPU node with MPS: limiter in LD_PRELOAD, device by UUID, SM share × 100', () => {
    const a = gpuReplicaEnv({ gpu: gpus[1], setup, spec: spec({ 'mlfaas.gpu': '1', 'mlfaas.gpu.sm_share': '0.3' }), sandboxed: false });
    expect(a.env).toEqual({
      CUDA_VISIBLE_DEVICES: gpus[1].uuid,
      LD_PRELOAD: setup.limiter,
      TL_TOKEND_SOCKET: setup.tokendSocket,
      TL_DEVICE: '1',
      TL_TIMEOUT_MS: String(TL_TIMEOUT_MS),
      CUDA_MPS_PIPE_DIRECTORY: setup.mpsPipeDir,
      CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: '30',
    });
    expect(a.binds).toEqual([]);
    expect(a.enforced).toEqual({ temporal: true, spatial: true });
  });

  test('sandboxed: paths as the sandbox sees them, tokend dir bound, LD_PRELOAD left to the last exec; an SLO makes it an SLO client', () => {
    const a = gpuReplicaEnv({ gpu: gpus[0], setup, spec: spec({ 'mlfaas.gpu': '1', 'mlfaas.slo.latency_ms': '50' }), sandboxed: true });
    expect(a.env.LD_PRELOAD).toBeUndefined();
    expect(a.preload).toBe('/var/openfaas/platform/native/build/liblimiter.so');
    expect(a.env.TL_TOKEND_SOCKET).toBe(`${SANDBOX_PATHS.tokend}/tokend.sock`);
    expect(a.binds).toEqual([{ src: '/data/tokend', dst: SANDBOX_PATHS.tokend, readOnly: true }]);
    expect(a.env.TL_SLO).toBe('1');
    expect(a.env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).toBe('100'); // no sm_share: the whole GPU
    expect(a.env.CUDA_MPS_PIPE_DIRECTORY).toBe(setup.mpsPipeDir); // outside the data dir: same path inside
  });

  test('what is not there is not enforced, and said so', () => {
    const bare = gpuReplicaEnv({ gpu: gpus[0], setup: { node }, spec: spec({ 'mlfaas.gpu': '1' }), sandboxed: false });
    expect(bare.env).toEqual({ CUDA_VISIBLE_DEVICES: gpus[0].uuid });
    expect(bare.enforced).toEqual({ temporal: false, spatial: false });
    expect(describeGpus({ node }, node))
      .toMatch(/nvidia-smi: gpu0 NVIDIA H100 80GB HBM3 81559 MiB, gpu1 .*temporal quota not enforced \(liblimiter.so not built\); SM share not enforced/);
    expect(describeGpus(setup, node)).toMatch(/temporal quota enforced \(limiter \+ tokend\); SM share enforced \(MPS\)/);
    expect(describeGpus(undefined, { source: 'none', gpus: [], note: 'no nvidia-smi on PATH' })).toBe('none (no nvidia-smi on PATH)');
  });

  test('a stub node puts the stub driver first on LD_LIBRARY_PATH', () => {
    const stub: GpuNode = { source: 'stub', gpus: stubGpus(1), stubDriverDir: '/repo/native/build/stub' };
    const a = gpuReplicaEnv({ gpu: stub.gpus[0], setup: { node: stub }, spec: spec(), sandboxed: false, ldLibraryPath: '/opt/lib' });
    expect(a.env.LD_LIBRARY_PATH).toBe('/repo/native/build/stub:/opt/lib');
    expect(a.env.CUDA_VISIBLE_DEVICES).toBe('GPU-stub-0');
  });

  test('GpuReplicas: only functions that ask; spread over GPUs; kept across restarts; released on stop', () => {
    const g = new GpuReplicas(setup);
    expect(g.attach('plain', spec(), false)).toBeUndefined();
    const want = spec({ 'mlfaas.gpu': '1' });
    expect(g.attach('a', want, false)!.device).toBe(0);
    expect(g.attach('b', want, false)!.device).toBe(1);
    expect(g.attach('a', want, false)!.device).toBe(0); // a restart keeps its GPU
    expect(g.attach('c', want, false)!.device).toBe(0);
    g.release('a');
    g.release('c');
    expect(g.deviceOf('a')).toBeUndefined();
    expect(g.attach('d', want, false)!.device).toBe(0);
    expect(new GpuReplicas({ node: { source: 'none', gpus: [] } }).attach('x', want, false)).toBeUndefined();
  });
});

describe('MPS control daemon commands', () => {
  test('used on a node with GPUs and the control program (every GPU replica then shares one uid)', () => {
    const real: GpuNode = { source: 'nvidia-smi', gpus };
    const bin = '/usr/bin/nvidia-cuda-mps-control';
    expect(mpsUnusable(real, bin)).toBeUndefined();
    expect(mpsUnusable(real, undefined)).toBe('no nvidia-cuda-mps-control on PATH');
    expect(mpsUnusable({ source: 'stub', gpus: stubGpus(1) }, bin)).toBeUndefined(); // the tests' stand-in control program
    expect(mpsUnusable({ source: 'none', gpus: [] }, bin)).toBe('no GPU');
    expect(describeGpus({ node: real, mpsWhy: 'stub GPUs' }, real)).toMatch(/SM share not enforced \(no MPS: stub GPUs\)/);
  });

  test('start with -d and stop with quit on stdin, both naming the same pipe and log dirs', () => {
    const dirs = mpsDirs('/var/lib/mlfaas', '/run/mlfaas');
    expect(dirs.pipe).toMatch(/^\/run\/mlfaas\/mps-[0-9a-f]{8}\/pipe$/);
    expect(dirs.log).toBe(dirs.pipe.replace(/pipe$/, 'log'));
    expect(mpsDirs('/other', '/run/mlfaas').pipe).not.toBe(dirs.pipe); // one daemon per data dir
    const env = { CUDA_MPS_PIPE_DIRECTORY: dirs.pipe, CUDA_MPS_LOG_DIRECTORY: dirs.log };
    expect(mpsCommands('/usr/bin/nvidia-cuda-mps-control', dirs)).toEqual({
      start: { argv: ['/usr/bin/nvidia-cuda-mps-control', '-d'], env },
      stop: { argv: ['/usr/bin/nvidia-cuda-mps-control'], env, input: 'quit\n' },
    });
  });

  test('for sandboxed clients the daemon starts in a mount namespace whose /dev/shm is the shared MPS directory, then drops to the GPU uid', () => {
    const dirs = mpsDirs('/var/lib/mlfaas', '/run/mlfaas');
    expect(dirs.shm).toBe(dirs.pipe.replace(/pipe$/, 'shm'));
    const ns = { unshare: '/usr/bin/unshare', sh: '/bin/sh', mount: '/bin/mount', setpriv: '/usr/bin/setpriv', runAs: { uid: 199999, gid: 199999 } };
    const { start, stop } = mpsCommands('/usr/bin/nvidia-cuda-mps-control', dirs, ns);
    expect(start.argv).toEqual(['/usr/bin/unshare', '--mount', '--propagation', 'private', '/bin/sh', '-c', '/bin/mount --bind "$0" /dev/shm && exec "$@"',
      dirs.shm, '/usr/bin/setpriv', '--reuid', '199999', '--regid', '199999', '--clear-groups', '/usr/bin/nvidia-cuda-mps-control', '-d']);
    expect(stop.argv).toEqual(['/usr/bin/nvidia-cuda-mps-control']); // quit reaches it through the pipe directory
  });
});

describe('sandbox LD_PRELOAD', () => {
  test('handed to the native sandbox, which sets it for the function\'s exec only (not its own steps)', () => {
    const argv = sandboxArgv({ uid: 2000, gid: 2000, cgroupProcs: [], binds: [{ src: '/repo', dst: SANDBOX_PATHS.platform, readOnly: true }], tmpfs: [],
      cwd: '/', preload: '/var/openfaas/platform/native/build/liblimiter.so' }, ['./fn']);
    const at = argv.indexOf('--preload');
    expect(argv[at + 1]).toBe('/var/openfaas/platform/native/build/liblimiter.so');
    expect(at).toBeLessThan(argv.indexOf('--'));
    expect(argv.slice(argv.indexOf('--') + 1)).toEqual(['./fn']);
    const none = sandboxArgv({ uid: 2000, gid: 2000, cgroupProcs: [], binds: [], tmpfs: [], cwd: '/' }, ['./fn']);
    expect(none.join(' ')).not.toMatch(/preload/);
  });
});

describe('GPU quotas to tokend', () => {
  test('<q, q> on gpuN by pid; the rules of exited replicas are removed before the next one', async () => {
    const calls: string[] = [];
    const control = {
      setQuota: async (q: { pid?: number; device: unknown; request: number; limit: number }) =>
        (calls.push(`set ${q.pid} ${q.device} ${q.request}/${q.limit}`), { monoNs: 0 }),
      remove: async (t: { pid?: number; device: unknown }) => (calls.push(`remove ${t.pid} ${t.device}`), { monoNs: 0 }),
    };
    const alive = new Set([10, 11]);
    const push = gpuQuotaPusher(control, (pid) => alive.has(pid));
    await push(10, 0, 0.3);
    await push(11, 1, 0.9);
    alive.delete(10);
    await push(11, 1, 0.5);
    await push(12, 0, 1);
    expect(calls).toEqual(['set 10 gpu0 0.3/0.3', 'set 11 gpu1 0.9/0.9', 'remove 10 gpu0', 'set 11 gpu1 0.5/0.5', 'set 12 gpu0 1/1']);
  });
});
