/* Reaches the driver with dlopen + dlsym only (no -lcuda, no cuGetProcAddress)
 * and launches kernels for --seconds S (default 0.5) of --kernel-us U (1000). */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv) {
  double seconds = 0.5;
  unsigned us = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);
    if (strcmp(argv[i], "--kernel-us") == 0) us = (unsigned)atoi(argv[i + 1]);
  }
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
  CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
  CUresult (*getfn)(CUfunction *, CUmodule, const char *) = (CUresult(*)(CUfunction *, CUmodule, const char *))dlsym(h, "cuModuleGetFunction");
  CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))dlsym(h, "cuStreamSynchronize");
  launch_t launch = (launch_t)dlsym(h, "cuLaunchKernel");
  void *ours = dlsym(RTLD_DEFAULT, "cuLaunchKernel");
  if (!init || !getfn || !sync || !launch) { fprintf(stderr, "dlsym failed\n"); return 1; }
  init(0);
  CUfunction f;
  char name[32];
  snprintf(name, sizeof name, "k_%uus", us);
  getfn(&f, NULL, name);
  unsigned long long t0 = now_ns(), end = t0 + (unsigned long long)(seconds * 1e9), n = 0;
  while (now_ns() < end) {
    if (launch(f, 8, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS) return 1;
    sync(NULL);
    n++;
  }
  printf("{\"kernels\":%llu,\"elapsedNs\":%llu,\"kernelUs\":%u,\"limited\":%d}\n", n, now_ns() - t0, us,
         ours != NULL && (void *)launch == ours);
  return 0;
}
