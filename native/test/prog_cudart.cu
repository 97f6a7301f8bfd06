// An nvcc-built CUDA runtime program (built twice: -cudart static and shared).
// On a GPU: a spin kernel of --kernel-us U microseconds launched in a loop with
// cudaStreamSynchronize for --seconds S; prints kernels completed and the
// per-launch host cost of --count N back-to-back empty launches.
// On the stub driver cudart's initialisation stops at cuGetExportTable (private
// tables a stub cannot provide); the program then reports the error, and the
// test reads the limiter's log to see which entry points were swapped.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <cuda_runtime.h>

// spins on the global nanosecond timer, so the kernel lasts `ns` of wall time
// while it is resident (time-slicing with other contexts stretches it)
__device__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__global__ void spin(unsigned long long ns) {
  unsigned long long start = gtime();
  while (gtime() - start < ns) {}
}
__global__ void empty() {}

int main(int argc, char **argv) {
  double seconds = 1;
  int us = 1000, count = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
    if (!strcmp(argv[i], "--kernel-us")) us = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--count")) count = atoi(argv[i + 1]);
  }
  cudaError_t e = cudaFree(0);
  if (e != cudaSuccess) {
    printf("{\"init\":\"failed\",\"error\":\"%s\"}\n", cudaGetErrorString(e));
    return 0;
  }
  cudaStream_t s;
  cudaStreamCreate(&s);
  auto t0 = std::chrono::steady_clock::now();
  long long n = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    spin<<<1, 1, 0, s>>>((unsigned long long)us * 1000ull);
    cudaStreamSynchronize(s);
    n++;
  }
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double per = 0;
  if (count > 0) { // host cost of a launch call: bursts of 256 (below the queue depth), sync between
    double total = 0;
    for (int done = 0; done < count; done += 256) {
      auto b0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 256; i++) empty<<<1, 1, 0, s>>>();
      total += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - b0).count();
      cudaStreamSynchronize(s);
    }
    per = total / (double)((count + 255) / 256 * 256);
  }
  printf("{\"init\":\"ok\",\"kernels\":%lld,\"elapsedNs\":%.0f,\"kernelUs\":%d,\"busyNs\":%lld,\"perLaunchNs\":%.1f}\n",
         n, el * 1e9, us, n * (long long)us * 1000, per);
  return 0;
}
