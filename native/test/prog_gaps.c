/* A framework-like client for the limiter's GPU-time tests and bench: each
 * request launches N kernels with host work between them (a forward pass whose
 * Python and launch calls leave the GPU idle between kernels), then waits for
 * them, as a serving loop does per request.
 *  --kernel-us U   duration of the base kernel on the stub ("k_<U>us"), default 200
 *  --gap-us G      host work (a spin) after each launch, default 0
 *  --kernels N     launches per request, default 20
 *  --streams S     launches go round-robin over S streams; the request waits
 *                  with cuCtxSynchronize when S > 1, cuStreamSynchronize else (default 1)
 *  --mix           kernels cycle through three functions: U/2 us x 4 blocks,
 *                  U us x 8 blocks, 2U us x 32 blocks (costs per block differ 8x)
 *  --sync event    wait with cuEventRecord + cuEventSynchronize instead
 *  --seconds S     run time, default 2
 *  --warmup-ms W   requests completed in the first W ms are not counted (default 300)
 * Output: one JSON line: requests, kernels, device busy time of the kernels
 * (from their nominal durations: the stub runs each exactly that long), the
 * counted interval and its busy time, per-request latency percentiles and,
 * under the limiter, the time its launches waited for tokens in that interval. */
#define _GNU_SOURCE
#include <cuda.h>

#include "prog_util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "limiter.h"

#define MAXS 16


static void spin_us(unsigned us) {
  unsigned long long end = now_ns() + us * 1000ull;
  while (now_ns() < end) {}
}

/* the limiter's throttled_ns when it is preloaded, else 0 */
static void (*g_stats)(struct tl_stats *);
static unsigned long long throttled_ns(void) {
  struct tl_stats st;
  if (!g_stats) return 0;
  g_stats(&st);
  return st.throttled_ns;
}

static int cmp(const void *x, const void *y) {
  unsigned long long a = *(const unsigned long long *)x, b = *(const unsigned long long *)y;
  return a < b ? -1 : a > b;
}

int main(int argc, char **argv) {
  unsigned us = 200, gap = 0, per = 20, nstreams = 1, mix = 0, ev_sync = 0;
  double seconds = 2, warmup_ms = 300;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (strcmp(a, "--mix") == 0) { mix = 1; continue; }
    i++;
    if (strcmp(a, "--kernel-us") == 0) us = (unsigned)atoi(v);
    else if (strcmp(a, "--gap-us") == 0) gap = (unsigned)atoi(v);
    else if (strcmp(a, "--kernels") == 0) per = (unsigned)atoi(v);
    else if (strcmp(a, "--streams") == 0) nstreams = (unsigned)atoi(v);
    else if (strcmp(a, "--sync") == 0) ev_sync = strcmp(v, "event") == 0;
    else if (strcmp(a, "--seconds") == 0) seconds = atof(v);
    else if (strcmp(a, "--warmup-ms") == 0) warmup_ms = atof(v);
    else { fprintf(stderr, "unknown option %s\n", a); return 2; }
  }
  if (nstreams < 1) nstreams = 1;
  if (nstreams > MAXS) nstreams = MAXS;
  if (per < 1) per = 1;
  g_stats = (void (*)(struct tl_stats *))dlsym(RTLD_DEFAULT, "tl_get_stats");
  primary_context();
  /* the three kernels of --mix (without it, all three are the base kernel) */
  unsigned dur[3] = {mix ? us / 2 : us, us, mix ? 2 * us : us}, blocks[3] = {mix ? 4 : 8, 8, mix ? 32 : 8};
  CUfunction fn[3];
  for (int k = 0; k < 3; k++) {
    char name[32];
    snprintf(name, sizeof name, "k_%uus", dur[k]);
    CK(cuModuleGetFunction(&fn[k], NULL, name));
  }
  CUstream st[MAXS];
  for (unsigned i = 0; i < nstreams; i++) CK(cuStreamCreate(&st[i], 0));
  CUevent done;
  CK(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
  size_t cap = 1 << 16, nlat = 0;
  unsigned long long *lat = malloc(cap * sizeof *lat);
  if (!lat) return 3;
  unsigned long long t0 = now_ns(), end = t0 + (unsigned long long)(seconds * 1e9);
  unsigned long long from = t0 + (unsigned long long)(warmup_ms * 1e6), counted_from = 0, last = 0;
  unsigned long long requests = 0, kernels = 0, busy = 0, busy_counted = 0, idx = 0, thr0 = 0;
  while (now_ns() < end) {
    unsigned long long r0 = now_ns(), rb = 0;
    for (unsigned i = 0; i < per; i++, idx++) {
      unsigned k = (unsigned)(idx % 3);
      CK(cuLaunchKernel(fn[k], blocks[k], 1, 1, 32, 1, 1, 0, st[i % nstreams], NULL, NULL));
      rb += dur[k] * 1000ull;
      if (gap) spin_us(gap);
    }
    if (ev_sync) { CK(cuEventRecord(done, st[0])); CK(cuEventSynchronize(done)); }
    else if (nstreams > 1) CK(cuCtxSynchronize());
    else CK(cuStreamSynchronize(st[0]));
    unsigned long long r1 = now_ns();
    requests++;
    kernels += per;
    busy += rb;
    if (r0 >= from) {
      if (!counted_from) { counted_from = r0; thr0 = throttled_ns(); }
      busy_counted += rb;
      last = r1;
      if (nlat == cap) { cap *= 2; lat = realloc(lat, cap * sizeof *lat); if (!lat) return 3; }
      lat[nlat++] = r1 - r0;
    }
  }
  qsort(lat, nlat, sizeof *lat, cmp);
  unsigned long long span = last > counted_from ? last - counted_from : 0;
  printf("{\"requests\":%llu,\"kernels\":%llu,\"busyNs\":%llu,\"elapsedNs\":%llu,\"countedRequests\":%zu,"
         "\"countedNs\":%llu,\"countedBusyNs\":%llu,\"throttledNs\":%llu,\"share\":%.4f,\"p50Ns\":%llu,\"p99Ns\":%llu}\n",
         requests, kernels, busy, now_ns() - t0, nlat, span, busy_counted, counted_from ? throttled_ns() - thr0 : 0,
         span ? (double)busy_counted / (double)span : 0.0, nlat ? lat[nlat / 2] : 0,
         nlat ? lat[(size_t)(nlat * 0.99) < nlat ? (size_t)(nlat * 0.99) : nlat - 1] : 0);
  for (unsigned i = 0; i < nstreams; i++) CK(cuStreamDestroy_v2(st[i]));
  return 0;
}
