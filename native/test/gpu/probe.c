/* probe: a CUDA driver-API program for the GPU check (native/test/gpu-check.sh).
 * Kernels are hand-written PTX (no nvcc needed; any driver >= 450 JIT-compiles it).
 *
 *   probe --mode empty   --count N             host cost of a launch call: bursts of 256
 *                                              empty kernels (timed), synchronize between
 *   probe --mode spin    --seconds S --kernel-us U
 *                                              launch + synchronize loop of U-µs kernels that
 *                                              spin on %globaltimer; used = kernels × U / wall
 *   probe --mode compute --seconds S [--blocks B] [--threads T] [--iters I]
 *                                              a compute-bound FMA kernel (default 8 blocks
 *                                              per SM × 256 threads): mean kernel time
 *   probe --mode events [--count N]            what CUDA events measure, N times each (min and
 *                                              median, ns): two events back to back ("pair"), an
 *                                              empty kernel between them ("one"), 64 empty
 *                                              kernels between them per kernel ("pipelined"),
 *                                              all queued behind a 50 us spin kernel so the
 *                                              device meets them together; and an empty kernel
 *                                              bracketed on an idle stream ("idle": the launch
 *                                              call's host time is in it)
 *   --trace FILE   CLOCK_MONOTONIC ns of every kernel completion (tokend's clock)
 *   --deadline S   exit by SIGALRM after S s whatever happens (default: seconds + 60)
 *
 * Output: one JSON line (on a CUDA error: {"error":...} and exit 3).
 * On the stub driver (native/build/stub) a kernel lasts STUB_KERNEL_US µs. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *PTX =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    /* spin(ns): return once %globaltimer has advanced ns since the start */
    ".visible .entry spin(.param .u64 ns)\n{\n .reg .u64 %rd<5>;\n .reg .pred %p<2>;\n"
    " ld.param.u64 %rd1, [ns];\n mov.u64 %rd2, %globaltimer;\nL1:\n mov.u64 %rd3, %globaltimer;\n"
    " sub.u64 %rd4, %rd3, %rd2;\n setp.lt.u64 %p1, %rd4, %rd1;\n @%p1 bra L1;\n ret;\n}\n"
    ".visible .entry empty()\n{\n ret;\n}\n"
    /* compute(iters, out): iters dependent FMAs per thread, one store so it is not elided */
    ".visible .entry compute(.param .u64 iters, .param .u64 out)\n{\n .reg .u64 %rd<6>;\n"
    " .reg .f32 %f<4>;\n .reg .pred %p<2>;\n"
    " ld.param.u64 %rd1, [iters];\n mov.u64 %rd2, 0;\n mov.f32 %f1, 0f3F800000;\n mov.f32 %f2, 0f3F7FFFFE;\n"
    "L2:\n fma.rn.f32 %f1, %f1, %f2, %f2;\n add.u64 %rd2, %rd2, 1;\n setp.lt.u64 %p1, %rd2, %rd1;\n @%p1 bra L2;\n"
    " ld.param.u64 %rd3, [out];\n cvta.to.global.u64 %rd4, %rd3;\n st.global.f32 [%rd4], %f1;\n ret;\n}\n";

static unsigned long long mono(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ull + t.tv_nsec;
}

#define CK(x)                                                                                      \
  do {                                                                                             \
    CUresult r_ = (x);                                                                             \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      const char *s_ = "?";                                                                        \
      cuGetErrorString(r_, &s_);                                                                   \
      printf("{\"error\":\"%s\",\"code\":%d,\"call\":\"%s\"}\n", s_, (int)r_, #x);                 \
      fflush(stdout);                                                                              \
      exit(3);                                                                                     \
    }                                                                                              \
  } while (0)

static int cmp_ull(const void *a, const void *b) {
  unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
  return x < y ? -1 : x > y;
}

/* elapsed ns between two events around `kernels` empty kernels, behind a 50 us spin (held) or not */
static unsigned long long bracket(CUfunction spin, CUfunction empty, CUstream s, CUevent a, CUevent b, int kernels, int held) {
  unsigned long long ns = 50000;
  void *sa[] = {&ns};
  if (held) CK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, sa, NULL));
  CK(cuEventRecord(a, s));
  for (int i = 0; i < kernels; i++) CK(cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
  CK(cuEventRecord(b, s));
  CK(cuStreamSynchronize(s));
  float ms = 0;
  CK(cuEventElapsedTime(&ms, a, b));
  return (unsigned long long)(ms * 1e6 + 0.5);
}

static int events_mode(CUmodule mod, CUfunction empty, unsigned n) {
  CUfunction spin;
  CUstream s;
  CUevent a, b;
  CK(cuModuleGetFunction(&spin, mod, "spin"));
  CK(cuStreamCreate(&s, 0));
  CK(cuEventCreate(&a, CU_EVENT_DEFAULT));
  CK(cuEventCreate(&b, CU_EVENT_DEFAULT));
  static unsigned long long v[4][1000];
  const char *names[4] = {"pair", "one", "pipelined", "idle"};
  bracket(spin, empty, s, a, b, 1, 1); /* warm-up */
  for (unsigned i = 0; i < n; i++) {
    v[0][i] = bracket(spin, empty, s, a, b, 0, 1);
    v[1][i] = bracket(spin, empty, s, a, b, 1, 1);
    v[2][i] = bracket(spin, empty, s, a, b, 64, 1) / 64;
    v[3][i] = bracket(spin, empty, s, a, b, 1, 0);
  }
  printf("{\"pid\":%d,\"mode\":\"events\",\"count\":%u", (int)getpid(), n);
  for (int k = 0; k < 4; k++) {
    qsort(v[k], n, sizeof v[k][0], cmp_ull);
    printf(",\"%sMinNs\":%llu,\"%sMedNs\":%llu", names[k], n ? v[k][0] : 0, names[k], n ? v[k][n / 2] : 0);
  }
  printf("}\n");
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = "spin", *trace = NULL;
  double seconds = 1, deadline = 0;
  unsigned us = 1000, blocks = 0, threads = 256;
  unsigned long long count = 100000, iters = 2000000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1];
    if (!strcmp(a, "--mode")) mode = v;
    else if (!strcmp(a, "--seconds")) seconds = atof(v);
    else if (!strcmp(a, "--kernel-us")) us = (unsigned)atoi(v);
    else if (!strcmp(a, "--count")) count = strtoull(v, 0, 10);
    else if (!strcmp(a, "--blocks")) blocks = (unsigned)atoi(v);
    else if (!strcmp(a, "--threads")) threads = (unsigned)atoi(v);
    else if (!strcmp(a, "--iters")) iters = strtoull(v, 0, 10);
    else if (!strcmp(a, "--trace")) trace = v;
    else if (!strcmp(a, "--deadline")) deadline = atof(v);
    else { fprintf(stderr, "probe: unknown option %s\n", a); return 2; }
  }
  if (strcmp(mode, "empty") && strcmp(mode, "spin") && strcmp(mode, "compute") && strcmp(mode, "events")) {
    fprintf(stderr, "probe: --mode empty|spin|compute|events\n");
    return 2;
  }
  alarm((unsigned)(deadline > 0 ? deadline : seconds + 60)); /* default action: terminate */

  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  CUstream s;
  CUdeviceptr out;
  int sms = 0;
  CK(cuInit(0));
  CK(cuDeviceGet(&dev, 0));
  CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CK(cuModuleLoadData(&mod, PTX));
  CK(cuModuleGetFunction(&f, mod, strcmp(mode, "events") ? mode : "empty"));
  if (!strcmp(mode, "events")) return events_mode(mod, f, count < 1000 ? (unsigned)count : 1000);
  CK(cuStreamCreate(&s, 0));
  CK(cuMemAlloc(&out, 64));
  if (!blocks) blocks = !strcmp(mode, "compute") ? 8u * (unsigned)(sms > 0 ? sms : 1) : 1;
  if (strcmp(mode, "compute")) threads = 1;

  unsigned long long ns = (unsigned long long)us * 1000ull;
  void *spin_args[] = {&ns}, *compute_args[] = {&iters, &out};
  void **args = !strcmp(mode, "spin") ? spin_args : !strcmp(mode, "compute") ? compute_args : NULL;
  /* warm-up: module JIT, the limiter's connection and first grant */
  CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
  CK(cuStreamSynchronize(s));

  if (!strcmp(mode, "empty")) { /* host cost only: bursts below the launch queue's depth */
    unsigned long long timed = 0, n = 0;
    while (n < count) {
      unsigned long long a = mono();
      for (int i = 0; i < 256; i++) CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
      timed += mono() - a;
      n += 256;
      CK(cuStreamSynchronize(s));
    }
    printf("{\"pid\":%d,\"mode\":\"empty\",\"launches\":%llu,\"perLaunchNs\":%.1f}\n", (int)getpid(), n,
           (double)timed / (double)n);
    return 0;
  }

  FILE *tf = trace ? fopen(trace, "w") : NULL;
  unsigned long long n = 0, t0 = mono(), end = t0 + (unsigned long long)(seconds * 1e9), kmin = ~0ull, kmax = 0;
  while (mono() < end) {
    unsigned long long a = mono();
    CK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s, args, NULL));
    CK(cuStreamSynchronize(s));
    unsigned long long b = mono(), k = b - a;
    n++;
    if (k < kmin) kmin = k;
    if (k > kmax) kmax = k;
    if (tf) fprintf(tf, "%llu\n", b);
  }
  unsigned long long el = mono() - t0;
  if (tf) fclose(tf);
  double used = !strcmp(mode, "spin") && el ? (double)(n * ns) / (double)el : 0;
  printf("{\"pid\":%d,\"mode\":\"%s\",\"sms\":%d,\"blocks\":%u,\"threads\":%u,\"kernels\":%llu,\"elapsedNs\":%llu,"
         "\"used\":%.4f,\"kernelMinUs\":%.1f,\"kernelMaxUs\":%.1f,\"meanKernelUs\":%.1f}\n",
         (int)getpid(), mode, sms, blocks, threads, n, el, used, n ? kmin / 1e3 : 0.0, kmax / 1e3,
         n ? (double)el / (double)n / 1e3 : 0.0);
  return 0;
}
