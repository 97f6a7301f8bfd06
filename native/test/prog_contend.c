/* A contention client for the limiter benchmark (bench/native-bench.ts) and
 * test/native/limiter-contention.timing.test.ts: launch-then-synchronize loops
 * on the stub driver (or a GPU), timing every launch call.
 *  --kernel-us U   kernel duration on the stub (function "k_<U>us"), default 1000
 *  --blocks B      grid size, default 8 (cost charged: B x TL_NS_PER_BLOCK)
 *  --seconds S     run time, default 2
 *  --threads T     launching threads, each with its own stream, default 1
 *  --depth D       launches issued per synchronize, default 1
 *  --warmup-ms W   launches in the first W ms are not timed (default 300: the
 *                  quota is set after the process starts)
 *  --trace FILE    CLOCK_MONOTONIC ns of each completed launch
 * Each cuLaunchKernel call is timed (clock_gettime before and after: the time
 * in the hooked call, limiter and driver). When the limiter is preloaded, its
 * exported tl_get_stats() is read around the call (outside the timed part): a
 * call during which the process's `throttled` counter moved is counted as
 * "waited" (it, or another thread, waited for tokens); the others are the fast
 * path. With one thread the split is exact; with several, a fast call that
 * overlapped another thread's wait is counted as waited, never the reverse.
 * Output: one JSON line with counts and percentiles (ns). */
#define _GNU_SOURCE
#include <cuda.h>

#include "prog_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "limiter.h"

static unsigned g_us = 1000, g_threads = 1, g_blocks = 8, g_depth = 1;
static double g_seconds = 2, g_warmup_ms = 300;
static const char *g_trace;
static CUfunction g_fn;
static CUcontext g_ctx; /* current on every launching thread, as the driver API requires */
static void (*g_stats)(struct tl_stats *);
static unsigned long long g_t0;



struct vec { unsigned long long *v; size_t n, cap; };
static void push(struct vec *a, unsigned long long x) {
  if (a->n == a->cap) {
    a->cap = a->cap ? 2 * a->cap : 4096;
    a->v = realloc(a->v, a->cap * sizeof *a->v);
    if (!a->v) { perror("realloc"); exit(3); }
  }
  a->v[a->n++] = x;
}

struct worker { unsigned long long kernels, elapsed; struct vec trace, fast, waited; };

static unsigned long long throttled(void) {
  if (!g_stats) return 0;
  struct tl_stats s;
  g_stats(&s);
  return s.throttled;
}

static void *run(void *arg) {
  struct worker *w = arg;
  CK(cuCtxSetCurrent(g_ctx));
  CUstream s;
  CK(cuStreamCreate(&s, 0));
  unsigned long long end = g_t0 + (unsigned long long)(g_seconds * 1e9);
  unsigned long long timed_from = g_t0 + (unsigned long long)(g_warmup_ms * 1e6);
  unsigned issued = 0;
  for (;;) {
    unsigned long long now = now_ns();
    if (now >= end) break;
    unsigned long long th0 = throttled(), a = now_ns();
    CK(cuLaunchKernel(g_fn, g_blocks, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    unsigned long long b = now_ns(), th1 = throttled();
    if (a >= timed_from) push(th1 != th0 ? &w->waited : &w->fast, b - a);
    if (++issued < g_depth) continue;
    CK(cuStreamSynchronize(s));
    w->kernels += issued;
    for (unsigned long long t = now_ns(); g_trace && issued; issued--) push(&w->trace, t);
    issued = 0;
  }
  if (issued) { CK(cuStreamSynchronize(s)); w->kernels += issued; }
  w->elapsed = now_ns() - g_t0;
  CK(cuStreamDestroy_v2(s));
  return NULL;
}

static int cmp(const void *x, const void *y) {
  unsigned long long a = *(const unsigned long long *)x, b = *(const unsigned long long *)y;
  return a < b ? -1 : a > b;
}

/* nearest-rank percentile of a sorted vector; 0 when empty */
static unsigned long long pct(const struct vec *a, double p) {
  if (!a->n) return 0;
  size_t i = (size_t)(p * (double)a->n);
  return a->v[i >= a->n ? a->n - 1 : i];
}

static void merge(struct vec *dst, const struct vec *src) {
  for (size_t i = 0; i < src->n; i++) push(dst, src->v[i]);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    i++;
    if (strcmp(a, "--kernel-us") == 0) g_us = (unsigned)atoi(v);
    else if (strcmp(a, "--blocks") == 0) g_blocks = (unsigned)atoi(v);
    else if (strcmp(a, "--seconds") == 0) g_seconds = atof(v);
    else if (strcmp(a, "--threads") == 0) g_threads = (unsigned)atoi(v);
    else if (strcmp(a, "--depth") == 0) g_depth = (unsigned)atoi(v) ? (unsigned)atoi(v) : 1;
    else if (strcmp(a, "--warmup-ms") == 0) g_warmup_ms = atof(v);
    else if (strcmp(a, "--trace") == 0) g_trace = v;
    else { fprintf(stderr, "unknown option %s\n", a); return 2; }
  }
  if (g_threads < 1) g_threads = 1;
  if (g_threads > 256) g_threads = 256;
  g_stats = (void (*)(struct tl_stats *))dlsym(RTLD_DEFAULT, "tl_get_stats");
  g_ctx = primary_context();
  char name[32];
  snprintf(name, sizeof name, "k_%uus", g_us);
  CK(cuModuleGetFunction(&g_fn, NULL, name));
  pthread_t th[256];
  struct worker *w = calloc(g_threads, sizeof *w);
  if (!w) return 3;
  g_t0 = now_ns();
  for (unsigned i = 0; i < g_threads; i++) pthread_create(&th[i], NULL, run, &w[i]);
  struct vec fast = {0}, waited = {0}, all = {0};
  unsigned long long kernels = 0, elapsed = 0;
  for (unsigned i = 0; i < g_threads; i++) {
    pthread_join(th[i], NULL);
    kernels += w[i].kernels;
    if (w[i].elapsed > elapsed) elapsed = w[i].elapsed;
    merge(&fast, &w[i].fast);
    merge(&waited, &w[i].waited);
  }
  merge(&all, &fast);
  merge(&all, &waited);
  qsort(fast.v, fast.n, sizeof *fast.v, cmp);
  qsort(waited.v, waited.n, sizeof *waited.v, cmp);
  qsort(all.v, all.n, sizeof *all.v, cmp);
  if (g_trace) {
    FILE *f = fopen(g_trace, "w");
    for (unsigned i = 0; f && i < g_threads; i++)
      for (size_t k = 0; k < w[i].trace.n; k++) fprintf(f, "%llu\n", w[i].trace.v[k]);
    if (f) fclose(f);
  }
  printf("{\"pid\":%d,\"threads\":%u,\"kernels\":%llu,\"elapsedNs\":%llu,\"kernelUs\":%u,\"busyNs\":%llu,"
         "\"metered\":%d,\"timed\":%zu,\"fast\":%zu,\"waited\":%zu,"
         "\"fastP50Ns\":%llu,\"fastP99Ns\":%llu,\"waitedP50Ns\":%llu,\"allP50Ns\":%llu,\"allP99Ns\":%llu}\n",
         (int)getpid(), g_threads, kernels, elapsed, g_us, kernels * g_us * 1000ull, g_stats != NULL, all.n,
         fast.n, waited.n, pct(&fast, 0.5), pct(&fast, 0.99), pct(&waited, 0.5), pct(&all, 0.5), pct(&all, 0.99));
  return 0;
}
