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

__global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
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
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  long long cycles = (long long)khz * us / 1000;
  cudaStream_t s;
  cudaStreamCreate(&s);
  auto t0 = std::chrono::steady_clock::now();
  long long n = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    spin<<<1, 1, 0, s>>>(cycles);
    cudaStreamSynchronize(s);
    n++;
  }
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double per = 0;
  if (count > 0) {
    auto b0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; i++) empty<<<1, 1, 0, s>>>();
    per = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - b0).count() / count;
    cudaStreamSynchronize(s);
  }
  printf("{\"init\":\"ok\",\"kernels\":%lld,\"elapsedNs\":%.0f,\"kernelUs\":%d,\"busyNs\":%lld,\"perLaunchNs\":%.1f}\n",
         n, el * 1e9, us, n * (long long)us * 1000, per);
  return 0;
}
