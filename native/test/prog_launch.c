/* A CUDA driver program linked with -lcuda, for the limiter tests.
 *  --kernel-us U   kernel duration on the stub (function "k_<U>us"), default 1000
 *  --seconds S     run time, default 1
 *  --threads T     launching threads, each with its own stream, default 1
 *  --mode M        sync | ptsz | ex | coop | graph | async (no sync: launch cost)
 *  --blocks B      grid size, default 8
 *  --count N       stop after N launches per thread (async mode)
 *  --depth D       launches issued per synchronize (default 1)
 *  --fork          fork once after init; parent and child both run and report
 *  --trace FILE    write the CLOCK_MONOTONIC ns of each completed launch
 *  --mem-test MiB  allocate 1 MiB blocks until denied or MiB reached, report
 *  --mem-api A     alloc (cuMemAlloc, default) | pool (cuMemAllocFromPoolAsync)
 *                  | vmm (cuMemCreate physical handles) for --mem-test
 * Output: one JSON line per process. */
#include <cuda.h>

#include "prog_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned g_us = 1000, g_threads = 1, g_blocks = 8, g_depth = 1;
static double g_seconds = 1;
static const char *g_mode = "sync", *g_trace, *g_mem_api = "alloc";
static unsigned long long g_count;
static CUfunction g_fn;
static CUcontext g_ctx; /* current on every launching thread, as the driver API requires */



struct worker { unsigned long long kernels, *trace; size_t ntrace, cap; unsigned long long elapsed; };

static void *run(void *arg) {
  struct worker *w = arg;
  CK(cuCtxSetCurrent(g_ctx));
  CUstream s;
  CK(cuStreamCreate(&s, 0));
  CUgraphExec exec = NULL;
  if (strcmp(g_mode, "graph") == 0) { /* 4 kernels of U/4 us each: one graph = one U us launch */
    CUgraph g;
    CUmodule m = NULL;
    CUfunction f;
    char name[32];
    snprintf(name, sizeof name, "k_%uus", g_us / 4);
    CK(cuModuleGetFunction(&f, m, name));
    CK(cuGraphCreate(&g, 0));
    CUgraphNode prev = NULL, n;
    for (int i = 0; i < 4; i++) {
      CUDA_KERNEL_NODE_PARAMS p = {.func = f, .gridDimX = g_blocks, .gridDimY = 1, .gridDimZ = 1,
                                   .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1};
      CK(cuGraphAddKernelNode_v2(&n, g, prev ? &prev : NULL, prev ? 1 : 0, &p));
      prev = n;
    }
    CK(cuGraphInstantiateWithFlags(&exec, g, 0));
    CK(cuGraphDestroy(g));
  }
  int async = strcmp(g_mode, "async") == 0;
  if (async) { /* warm-up: connect to tokend and take the first grant outside the timed loop */
    CK(cuLaunchKernel(g_fn, g_blocks, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CK(cuStreamSynchronize(s));
  }
  unsigned long long t0 = now_ns(), end = t0 + (unsigned long long)(g_seconds * 1e9);
  unsigned issued = 0;
  while (async ? w->kernels < g_count : now_ns() < end) {
    if (exec) CK(cuGraphLaunch(exec, s));
    else if (strcmp(g_mode, "ptsz") == 0) CK(cuLaunchKernel_ptsz(g_fn, g_blocks, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    else if (strcmp(g_mode, "ex") == 0) {
      CUlaunchConfig c = {.gridDimX = g_blocks, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1,
                          .blockDimZ = 1, .hStream = s};
      CK(cuLaunchKernelEx(&c, g_fn, NULL, NULL));
    } else if (strcmp(g_mode, "coop") == 0) CK(cuLaunchCooperativeKernel(g_fn, g_blocks, 1, 1, 32, 1, 1, 0, s, NULL));
    else CK(cuLaunchKernel(g_fn, g_blocks, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    if (async) { w->kernels++; continue; }
    if (++issued < g_depth) continue;
    if (strcmp(g_mode, "ptsz") == 0) CK(cuStreamSynchronize_ptsz(NULL));
    else CK(cuStreamSynchronize(s));
    w->kernels += issued;
    for (; g_trace && issued; issued--) {
      if (w->ntrace == w->cap) { w->cap = w->cap ? 2 * w->cap : 4096; w->trace = realloc(w->trace, w->cap * sizeof *w->trace); }
      w->trace[w->ntrace++] = now_ns();
    }
    issued = 0;
  }
  if (!async && issued) { /* a partial batch at the deadline: finish and count it */
    CK(strcmp(g_mode, "ptsz") == 0 ? cuStreamSynchronize_ptsz(NULL) : cuStreamSynchronize(s));
    w->kernels += issued;
  }
  w->elapsed = now_ns() - t0;
  if (async) CK(cuStreamSynchronize(s));
  if (exec) CK(cuGraphExecDestroy(exec));
  CK(cuStreamDestroy_v2(s));
  return NULL;
}

static CUresult mem_get(CUdeviceptr *p) {
  if (strcmp(g_mem_api, "pool") == 0) return cuMemAllocFromPoolAsync(p, 1 << 20, NULL, NULL);
  if (strcmp(g_mem_api, "vmm") == 0) {
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED, .location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}};
    CUmemGenericAllocationHandle h;
    CUresult r = cuMemCreate(&h, 1 << 20, &prop, 0);
    *p = (CUdeviceptr)h;
    return r;
  }
  return cuMemAlloc_v2(p, 1 << 20);
}

static CUresult mem_put(CUdeviceptr p) {
  if (strcmp(g_mem_api, "pool") == 0) return cuMemFreeAsync(p, NULL);
  if (strcmp(g_mem_api, "vmm") == 0) return cuMemRelease((CUmemGenericAllocationHandle)p);
  return cuMemFree_v2(p);
}

static void mem_test(unsigned mib) {
  CUdeviceptr p[4096];
  unsigned n = 0;
  CUresult r = CUDA_SUCCESS;
  while (n < mib && n < 4096 && (r = mem_get(&p[n])) == CUDA_SUCCESS) n++;
  size_t fr = 0, tot = 0;
  CK(cuMemGetInfo_v2(&fr, &tot));
  printf("{\"allocatedMiB\":%u,\"lastResult\":%d,\"freeBytes\":%zu,\"totalBytes\":%zu", n, (int)r, fr, tot);
  for (unsigned i = 0; i < n; i++) CK(mem_put(p[i]));
  CK(cuMemGetInfo_v2(&fr, &tot));
  printf(",\"freeAfterBytes\":%zu}\n", fr);
}

int main(int argc, char **argv) {
  int do_fork = 0;
  unsigned mem_mib = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (strcmp(a, "--fork") == 0) { do_fork = 1; continue; }
    i++;
    if (strcmp(a, "--kernel-us") == 0) g_us = (unsigned)atoi(v);
    else if (strcmp(a, "--seconds") == 0) g_seconds = atof(v);
    else if (strcmp(a, "--threads") == 0) g_threads = (unsigned)atoi(v);
    else if (strcmp(a, "--mode") == 0) g_mode = v;
    else if (strcmp(a, "--blocks") == 0) g_blocks = (unsigned)atoi(v);
    else if (strcmp(a, "--count") == 0) g_count = strtoull(v, NULL, 10);
    else if (strcmp(a, "--depth") == 0) g_depth = (unsigned)atoi(v) ? (unsigned)atoi(v) : 1;
    else if (strcmp(a, "--trace") == 0) g_trace = v;
    else if (strcmp(a, "--mem-test") == 0) mem_mib = (unsigned)atoi(v);
    else if (strcmp(a, "--mem-api") == 0) g_mem_api = v;
    else { fprintf(stderr, "unknown option %s\n", a); return 2; }
  }
  g_ctx = primary_context();
  if (mem_mib) { mem_test(mem_mib); return 0; }
  char name[32];
  snprintf(name, sizeof name, "k_%uus", g_us);
  CK(cuModuleGetFunction(&g_fn, NULL, name));
  pid_t child = do_fork ? fork() : -1;
  if (child == 0) g_trace = NULL;
  pthread_t th[256];
  struct worker w[256] = {{0}};
  if (g_threads > 256) g_threads = 256;
  for (unsigned i = 0; i < g_threads; i++) pthread_create(&th[i], NULL, run, &w[i]);
  unsigned long long kernels = 0, elapsed = 0;
  for (unsigned i = 0; i < g_threads; i++) {
    pthread_join(th[i], NULL);
    kernels += w[i].kernels;
    if (w[i].elapsed > elapsed) elapsed = w[i].elapsed;
  }
  if (g_trace) {
    FILE *f = fopen(g_trace, "w");
    for (unsigned i = 0; f && i < g_threads; i++)
      for (size_t k = 0; k < w[i].ntrace; k++) fprintf(f, "%llu\n", w[i].trace[k]);
    if (f) fclose(f);
  }
  printf("{\"pid\":%d,\"role\":\"%s\",\"kernels\":%llu,\"elapsedNs\":%llu,\"kernelUs\":%u,\"busyNs\":%llu,\"perLaunchNs\":%.1f}\n",
         (int)getpid(), child == 0 ? "child" : "parent", kernels, elapsed, g_us,
         kernels * (strcmp(g_mode, "graph") == 0 ? (g_us / 4) * 4ull : g_us) * 1000ull,
         kernels ? (double)elapsed / (double)kernels : 0.0);
  fflush(stdout);
  if (child > 0) { int st; waitpid(child, &st, 0); }
  return 0;
}
