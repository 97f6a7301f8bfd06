/* Shared by the C test programs that drive the CUDA driver API (stub or GPU):
 * the monotonic clock, a fail-fast check, and the primary context. */
#ifndef PROG_UTIL_H
#define PROG_UTIL_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { fprintf(stderr, "%s: %d\n", #x, (int)r_); exit(3); } } while (0)

static inline unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* cuInit, device 0's primary context, current on the calling thread (other threads must make it
 * current themselves, as the driver API requires). */
static inline CUcontext primary_context(void) {
  CUdevice dev;
  CUcontext ctx;
  CK(cuInit(0));
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  return ctx;
}

#endif
