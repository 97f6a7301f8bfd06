/**
 * The limiter's interception on the stub driver: exported symbols agree with
 * the hook table, the cudart-like resolver cases, dlopen+dlsym, -lcuda, the
 * memory cap, and the C unit tests of tokend's policy.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { buildDir, haveCuda, limiterEnv, limiterSo, make, readStats, run, stubDir, tmp } from './helpers';

const d = haveCuda ? describe : describe.skip;
if (!haveCuda) console.warn('native tests: /usr/local/cuda/include/cuda.h missing, CUDA limiter tests skipped');

beforeAll(() => make(haveCuda ? 'test-progs' : 'all'));

test('tokend policy unit tests (C, table-driven) pass', () => {
  const out = execFileSync(path.join(buildDir, 'policy_test'), { encoding: 'utf8' });
  expect(out).toMatch(/^0 of \d+ failed$/m);
});

d('limiter interception (stub libcuda.so.1)', () => {
  test('nm -D exports exactly the hook table plus dlsym and tl_get_stats', () => {
    const hooks = execFileSync(path.join(buildDir, 'hooks_list'), { encoding: 'utf8' }).split('\n').filter(Boolean);
    const nm = execFileSync('nm', ['-D', '--defined-only', limiterSo], { encoding: 'utf8' });
    const exported = nm.split('\n').filter((l) => / T /.test(l)).map((l) => l.trim().split(/\s+/)[2]).sort();
    expect(exported).toEqual([...hooks, 'dlsym', 'tl_get_stats'].sort());
    // every hook is a real driver entry point name the stub exports too
    const stub = execFileSync('nm', ['-D', '--defined-only', path.join(stubDir, 'libcuda.so.1')], { encoding: 'utf8' });
    for (const h of hooks) expect(stub).toMatch(new RegExp(` T ${h}$`, 'm'));
  });

  test('every launch, synchronize and allocation entry point cuda.h declares is hooked, or excluded for a reason', () => {
    // the driver exports the name a #define maps it to (cuMemAlloc -> cuMemAlloc_v2), and a _ptsz / _ptds
    // variant where the per-thread-default-stream section maps it (that is what cudart resolves with flags 2)
    const h = readFileSync('/usr/local/cuda/include/cuda.h', 'utf8');
    const family = /^(cuLaunch\w*|cu\w*Synchronize\w*|cuMemAlloc\w*|cuMemCreate|cuMemRelease|cuMemFree\w*|cuMemHostAlloc|cuGraphLaunch\w*|cuMemGetInfo\w*)$/;
    const declared = new Set([...h.matchAll(/CUresult CUDAAPI (cu\w+)\(/g)].map((m) => m[1]).filter((n) => family.test(n)));
    const mapped = new Map([...h.matchAll(/^#define (cu\w+)\s+(cu\w+)\s*$/gm)].map((m) => [m[1], m[2]]));
    const perThread = new Set([...h.matchAll(/__CUDA_API_PTSZ\((cu\w+)\)/g)].map((m) => m[1]));
    const excluded: Record<string, string> = {
      cuLaunchHostFunc: 'a host callback: no device time',
      cuMemAllocHost: 'page-locked host memory, not device memory',
      cuMemHostAlloc: 'page-locked host memory, not device memory',
      cuMemFreeHost: 'page-locked host memory, not device memory',
    };
    const hooks = new Set(execFileSync(path.join(buildDir, 'hooks_list'), { encoding: 'utf8' }).split('\n').filter(Boolean));
    const missing: string[] = [];
    for (const name of declared) {
      if (excluded[name]) continue;
      const exp = mapped.get(name) ?? name;
      for (const v of [exp, ...(perThread.has(exp) || perThread.has(name) ? [`${exp}_ptsz`] : [])]) if (!hooks.has(v)) missing.push(v);
    }
    expect(declared.size).toBeGreaterThanOrEqual(20);
    expect(missing).toEqual([]);
    for (const n of ['cuCtxSynchronize_v2', 'cuEventSynchronize', 'cuMemCreate', 'cuMemAllocFromPoolAsync_ptsz', 'cuLaunchGridAsync'])
      expect(hooks.has(n)).toBe(true);
  });

  test('the stub is linked -Bsymbolic with soname libcuda.so.1', () => {
    const dyn = execFileSync('readelf', ['-d', path.join(stubDir, 'libcuda.so.1')], { encoding: 'utf8' });
    expect(dyn).toMatch(/SONAME.*\[libcuda\.so\.1\]/);
    expect(dyn).toMatch(/SYMBOLIC|FLAGS.*SYMBOLIC/);
  });

  test('cudart-like resolver: probe, versions, ptsz flag, legacy cuGetProcAddress', async () => {
    const t = tmp();
    const log = path.join(t.dir, 'stub.log');
    const tlLog = path.join(t.dir, 'tl.log');
    const r = await run(path.join(buildDir, 'prog_resolver'), [], limiterEnv({ STUB_CUDA_LOG: log, TL_LOG: tlLog, TL_STATS_FILE: path.join(t.dir, 'rs.st') }));
    expect(r.stdout).not.toMatch(/FAIL/);
    expect(r.code).toBe(0);
    const line = (k: string) => r.stdout.split('\n').find((l) => l.startsWith(k)) ?? '';
    expect(line('dlsym_cuGetProcAddress_v2')).toMatch(/limited=1/);
    expect(line('probe_empty')).toMatch(/result=500 status=1 null=1/); // CUDA_ERROR_NOT_FOUND, SYMBOL_NOT_FOUND
    expect(line('cuGetProcAddress@11030')).toMatch(/limited=1/); // legacy 4-argument hook
    expect(line('cuGetProcAddress@12000')).toMatch(/limited=1/); // _v2 hook
    expect(line('cuLaunchKernel@4000/0')).toMatch(/limited=1/);
    expect(line('cuLaunchKernel@7000/2')).toMatch(/limited=1 ptsz=1/);
    expect(line('cuLaunchKernelEx@11000')).toMatch(/status=2/); // VERSION_NOT_SUFFICIENT passed through
    expect(line('cuInit@2000')).toMatch(/limited=0/); // not hooked: the driver's own pointer
    expect(line('legacy_gpa')).toMatch(/limited=1/);
    // CUDA 13 runtimes ask for cuCtxSynchronize at 13000 and get cuCtxSynchronize_v2 (seen unswapped on the H100)
    expect(line('cuCtxSynchronize@2000')).toMatch(/limited=1/);
    expect(line('cuCtxSynchronize@13000')).toMatch(/limited=1 v2=1/);
    expect(line('ctx_sync_v2')).toMatch(/result=0/);
    // every other versioned launch / synchronize / allocation lookup a CUDA 12 or 13 runtime may make
    const more = r.stdout.split('\n').filter((l) => /^cu\w+@\d+\/\d+ result=/.test(l) && !l.startsWith('cuLaunchKernel@'));
    expect(more.length).toBeGreaterThanOrEqual(15);
    for (const l of more) expect(l).toMatch(/result=0 limited=1/);
    expect(readStats(path.join(t.dir, 'rs.st')).unswapped).toBe(0);
    const stubLog = readFileSync(log, 'utf8');
    // each hook reached its own real variant: the ptsz flag was not dropped
    expect(stubLog).toMatch(/ cuLaunchKernel stream=\(nil\) ptds=0 blocks=2 /);
    expect(stubLog).toMatch(/ cuLaunchKernel_ptsz stream=\(nil\) ptds=1 blocks=3 /);
    const swaps = readFileSync(tlLog, 'utf8');
    expect(swaps).toMatch(/swap cuLaunchKernel ver=7000 flags=2 -> cuLaunchKernel_ptsz via cuGetProcAddress_v2/);
    expect(swaps).toMatch(/dlsym cuGetProcAddress_v2 -> limiter/);
    t.cleanup();
  });

  test('without the limiter the resolver gets the driver pointers (control)', async () => {
    const r = await run(path.join(buildDir, 'prog_resolver'), [], { LD_LIBRARY_PATH: stubDir });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/limited=1/);
  });

  test('dlopen + dlsym program is limited and counted', async () => {
    const t = tmp();
    const stats = path.join(t.dir, 'st');
    const r = await run(path.join(buildDir, 'prog_dlopen'), ['--seconds', '0.2', '--kernel-us', '500'],
      limiterEnv({ TL_STATS_FILE: stats }));
    expect(r.code).toBe(0);
    expect(r.json[0].limited).toBe(1);
    const s = readStats(stats);
    expect(s.dlsym_hooked).toBeGreaterThanOrEqual(2); // cuLaunchKernel, cuStreamSynchronize
    expect(s.launches).toBe(r.json[0].kernels);
    t.cleanup();
  });

  test.each([
    { mode: 'sync' }, { mode: 'ptsz' }, { mode: 'ex' }, { mode: 'coop' }, { mode: 'graph' },
  ])('-lcuda program, $mode launches, reach the limiter', async ({ mode }) => {
    const t = tmp();
    const stats = path.join(t.dir, 'st');
    const r = await run(path.join(buildDir, 'prog_launch'), ['--seconds', '0.1', '--kernel-us', '200', '--mode', mode],
      limiterEnv({ TL_STATS_FILE: stats }));
    expect(r.code).toBe(0);
    const s = readStats(stats);
    expect(s.launches + s.graph_launches).toBe(r.json[0].kernels);
    if (mode === 'graph') expect(s.graph_launches).toBeGreaterThan(0);
    t.cleanup();
  });

  test('dlsym(RTLD_NEXT) from another library still finds the object after *that* library', async () => {
    const t = tmp();
    const src = (f: string, body: string) => { writeFileSync(path.join(t.dir, f), body); return path.join(t.dir, f); };
    const cc = (...a: string[]) => execFileSync('cc', a, { cwd: t.dir });
    cc('-shared', '-fPIC', '-o', 'libsecond.so', src('second.c', 'int probe_fn(void) { return 2; }'));
    cc('-shared', '-fPIC', '-o', 'libfirst.so', src('first.c', `#define _GNU_SOURCE
#include <dlfcn.h>
int probe_fn(void) { return 1; }
int call_next(void) { int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, "probe_fn"); return f ? f() : -1; }`));
    cc('-o', 'main', src('main.c', '#include <stdio.h>\nint call_next(void);\nint main(void) { printf("%d\\n", call_next()); return 0; }'),
      '-Wl,--no-as-needed', '-L.', '-lfirst', '-lsecond', '-Wl,-rpath,' + t.dir, '-ldl');
    const plain = await run(path.join(t.dir, 'main'), []);
    const pre = await run(path.join(t.dir, 'main'), [], limiterEnv());
    expect(plain.stdout.trim()).toBe('2');
    expect(pre.stdout.trim()).toBe('2');
    t.cleanup();
  });

  test('memory cap: allocations beyond TL_MEM_LIMIT fail, cuMemGetInfo reports the cap', async () => {
    const r = await run(path.join(buildDir, 'prog_launch'), ['--mem-test', '100'], limiterEnv({ TL_MEM_LIMIT: '10m' }));
    expect(r.code).toBe(0);
    const m = r.json[0];
    expect(m.allocatedMiB).toBe(10);
    expect(m.lastResult).toBe(2); // CUDA_ERROR_OUT_OF_MEMORY
    expect(m.totalBytes).toBe(10 << 20);
    expect(m.freeBytes).toBe(0);
    expect(m.freeAfterBytes).toBe(10 << 20); // frees returned what they reserved
    const ctl = await run(path.join(buildDir, 'prog_launch'), ['--mem-test', '20'], { LD_LIBRARY_PATH: stubDir });
    expect(ctl.json[0].allocatedMiB).toBe(20);
  });

  test('the SM share counts only where the MPS control daemon is running (its control socket in the pipe directory)', async () => {
    const t = tmp();
    const pipe = path.join(t.dir, 'pipe');
    mkdirSync(pipe);
    const share = async (env: Record<string, string>) => {
      const r = await run(path.join(buildDir, 'prog_launch'), ['--seconds', '0.05'],
        limiterEnv({ TL_LOG: 'stderr', CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: '40', ...env }));
      return /sm_share=([0-9.]+)/.exec(r.stderr)?.[1];
    };
    expect(await share({ CUDA_MPS_PIPE_DIRECTORY: pipe })).toBe('1.0000'); // no daemon: the driver runs the process without MPS
    const srv = net.createServer().listen(path.join(pipe, 'control'));
    await new Promise((r) => srv.once('listening', r));
    expect(await share({ CUDA_MPS_PIPE_DIRECTORY: pipe })).toBe('0.4000');
    expect(await share({ CUDA_MPS_PIPE_DIRECTORY: pipe, TL_SM_SHARE: '0.25' })).toBe('0.2500'); // explicit override
    srv.close();
    t.cleanup();
  });

  test.each([{ api: 'pool' }, { api: 'vmm' }])('memory cap holds for $api allocations (cuMemAllocFromPoolAsync, cuMemCreate)', async ({ api }) => {
    const r = await run(path.join(buildDir, 'prog_launch'), ['--mem-test', '100', '--mem-api', api], limiterEnv({ TL_MEM_LIMIT: '10m' }));
    expect(r.code).toBe(0);
    expect(r.json[0].allocatedMiB).toBe(10);
    expect(r.json[0].lastResult).toBe(2);
    expect(r.json[0].freeAfterBytes).toBe(10 << 20); // frees / releases returned what they reserved
  });
});
