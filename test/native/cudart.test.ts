/**
 * Real nvcc-built CUDA runtime programs (cudart static and shared, CUDA 13) under
 * the limiter on the stub driver: which driver entry points cudart resolved through
 * cuGetProcAddress_v2 got swapped. cudart's own initialisation then stops at
 * cuGetExportTable (private tables no stub can provide), so kernels are not run
 * here; native/test/gpu-check.sh runs the same program on a GPU.
 * Also shows why the stub must be linked -Bsymbolic.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { buildDir, haveCuda, limiterEnv, make, nativeDir, run, stubDir, tmp } from './helpers';

const haveNvcc = spawnSync('sh', ['-c', 'command -v nvcc || test -x /usr/local/cuda/bin/nvcc']).status === 0;
if (!haveNvcc) console.warn('native tests: nvcc not found, cudart programs skipped');

/**
 * Every (name, version, flags) the CUDA 13 runtime asks for that the limiter hooks, and the hook it must
 * get: all of them, as cudart resolves its whole driver table before it stops. cuCtxSynchronize at 13000
 * is the one the H100 run found unswapped (../shared/gpu/README.md); cuLaunchHostFunc and cuMemFreeHost
 * are resolved too and deliberately not hooked (host work, host memory).
 */
const EXPECTED_SWAPS = [
  'cuCtxSynchronize ver=13000 flags=0 -> cuCtxSynchronize_v2',
  'cuCtxSynchronize ver=2000 flags=0 -> cuCtxSynchronize',
  'cuEventSynchronize ver=2000 flags=0 -> cuEventSynchronize',
  'cuGetProcAddress ver=11030 flags=0 -> cuGetProcAddress',
  'cuGetProcAddress ver=12000 flags=0 -> cuGetProcAddress_v2',
  'cuGraphLaunch ver=10000 flags=0 -> cuGraphLaunch',
  'cuGraphLaunch ver=10000 flags=2 -> cuGraphLaunch_ptsz',
  'cuLaunchCooperativeKernel ver=9000 flags=0 -> cuLaunchCooperativeKernel',
  'cuLaunchCooperativeKernel ver=9000 flags=2 -> cuLaunchCooperativeKernel_ptsz',
  'cuLaunchKernel ver=4000 flags=0 -> cuLaunchKernel',
  'cuLaunchKernel ver=7000 flags=2 -> cuLaunchKernel_ptsz',
  'cuLaunchKernelEx ver=11060 flags=0 -> cuLaunchKernelEx',
  'cuLaunchKernelEx ver=11060 flags=2 -> cuLaunchKernelEx_ptsz',
  'cuMemAlloc ver=3020 flags=0 -> cuMemAlloc_v2',
  'cuMemAllocAsync ver=11020 flags=0 -> cuMemAllocAsync',
  'cuMemAllocAsync ver=11020 flags=2 -> cuMemAllocAsync_ptsz',
  'cuMemAllocFromPoolAsync ver=11020 flags=0 -> cuMemAllocFromPoolAsync',
  'cuMemAllocFromPoolAsync ver=11020 flags=2 -> cuMemAllocFromPoolAsync_ptsz',
  'cuMemAllocManaged ver=6000 flags=0 -> cuMemAllocManaged',
  'cuMemAllocPitch ver=3020 flags=0 -> cuMemAllocPitch_v2',
  'cuMemFree ver=3020 flags=0 -> cuMemFree_v2',
  'cuMemFreeAsync ver=11020 flags=0 -> cuMemFreeAsync',
  'cuMemFreeAsync ver=11020 flags=2 -> cuMemFreeAsync_ptsz',
  'cuMemGetInfo ver=3020 flags=0 -> cuMemGetInfo_v2',
  'cuStreamSynchronize ver=2000 flags=0 -> cuStreamSynchronize',
  'cuStreamSynchronize ver=7000 flags=2 -> cuStreamSynchronize_ptsz',
];

(haveCuda && haveNvcc ? describe : describe.skip)('nvcc-built cudart programs', () => {
  beforeAll(() => make('cuda-progs'), 120000);

  test.each([{ cudart: 'static' }, { cudart: 'shared' }])('cudart $cudart: entry points swapped', async ({ cudart }) => {
    const prog = path.join(buildDir, `prog_cudart_${cudart}`);
    const linked = execFileSync('ldd', [prog], { encoding: 'utf8' });
    if (cudart === 'static') expect(linked).not.toMatch(/libcudart/);
    else expect(linked).toMatch(/libcudart\.so/);
    const t = tmp();
    const log = path.join(t.dir, 'tl.log');
    const r = await run(prog, [], limiterEnv({ TL_LOG: log }));
    expect(r.code).toBe(0);
    expect(r.json[0].init).toBe('failed'); // the stub has no private export tables
    const swaps = readFileSync(log, 'utf8');
    expect(swaps).toMatch(/dlsym cuGetProcAddress_v2 -> limiter/);
    for (const s of EXPECTED_SWAPS) expect(swaps).toContain(`swap ${s} via cuGetProcAddress_v2`);
    expect(swaps.split('\n').filter((l) => / swap /.test(l))).toHaveLength(EXPECTED_SWAPS.length);
    expect(swaps).not.toMatch(/unswapped/);
    t.cleanup();
  });
});

(haveCuda ? describe : describe.skip)('stub link flags', () => {
  beforeAll(() => make('test-progs'));

  test('without -Bsymbolic the stub hands back the preloaded hooks, so no swap happens (the check would pass falsely)', async () => {
    const t = tmp();
    const so = path.join(t.dir, 'libcuda.so.1');
    execFileSync('cc', ['-O2', '-fPIC', '-shared', '-D__CUDA_API_VERSION_INTERNAL', '-I/usr/local/cuda/include',
      '-o', so, path.join(nativeDir, 'stub', 'cuda_stub.c'), '-Wl,-soname,libcuda.so.1', '-lpthread']);
    expect(existsSync(so)).toBe(true);
    const log = path.join(t.dir, 'tl.log');
    const r = await run(path.join(buildDir, 'prog_resolver'), [], limiterEnv({ LD_LIBRARY_PATH: t.dir, TL_LOG: log }));
    const swaps = readFileSync(log, 'utf8');
    // launches still land in the limiter (its export interposed the stub's table) ...
    expect(r.stdout).toMatch(/cuLaunchKernel@7000\/2 result=0 limited=1/);
    // ... but identity never matched: the real cuGetProcAddress path was not exercised
    expect(swaps).not.toMatch(/swap cuLaunchKernel/);
    expect(swaps).toMatch(/unswapped cuLaunchKernel/);
    // with the real -Bsymbolic stub the same program does get swaps
    const good = path.join(t.dir, 'good.log');
    await run(path.join(buildDir, 'prog_resolver'), [], limiterEnv({ LD_LIBRARY_PATH: stubDir, TL_LOG: good }));
    expect(readFileSync(good, 'utf8')).toMatch(/swap cuLaunchKernel ver=7000 flags=2 -> cuLaunchKernel_ptsz/);
    t.cleanup();
  });
});

describe('native/test/gpu-check.sh', () => {
  const script = path.join(nativeDir, 'test', 'gpu-check.sh');
  test('is valid bash', () => {
    expect(spawnSync('bash', ['-n', script]).status).toBe(0);
  });
  const noGpu = spawnSync('sh', ['-c', 'nvidia-smi -L']).status !== 0;
  (noGpu ? test : test.skip)('says it measured nothing on a machine without a GPU', () => {
    const r = spawnSync('bash', [script], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/no GPU .* nothing measured/);
  });
});
