/* Resolves the driver the way CUDA 12/13 runtimes do: dlopen("libcuda.so.1"),
 * dlsym("cuGetProcAddress_v2"), an empty-name probe, then entry points by
 * (name, version, flags). Prints one "key=value" line per check and exits 1
 * if a check that does not depend on the limiter fails. "limited=1" means the
 * pointer is the limiter's (equal to the preloaded export). */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
static int g_fail;

static int limited(const char *export_name, void *p) {
  void *ours = dlsym(RTLD_DEFAULT, export_name); /* the preloaded limiter's export, if any */
  return ours && ours == p;
}

#define CHECK(cond, ...) do { if (!(cond)) { g_fail = 1; printf("FAIL "); } printf(__VA_ARGS__); putchar('\n'); } while (0)

int main(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  CHECK(h != NULL, "dlopen=%d", h != NULL);
  if (!h) return 1;
  gpa2_t gpa2 = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
  CHECK(gpa2 != NULL, "dlsym_cuGetProcAddress_v2 limited=%d", limited("cuGetProcAddress_v2", (void *)gpa2));
  if (!gpa2) return 1;

  void *p = (void *)1;
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
  CUresult r = gpa2("", &p, 0, 0, &st);
  CHECK(r == CUDA_ERROR_NOT_FOUND && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && p == NULL,
        "probe_empty result=%d status=%d null=%d", (int)r, (int)st, p == NULL);

  void *v1 = NULL, *v2 = NULL;
  r = gpa2("cuGetProcAddress", &v1, 11030, 0, &st);
  CHECK(r == CUDA_SUCCESS, "cuGetProcAddress@11030 result=%d limited=%d", (int)r, limited("cuGetProcAddress", v1));
  r = gpa2("cuGetProcAddress", &v2, 12000, 0, &st);
  CHECK(r == CUDA_SUCCESS, "cuGetProcAddress@12000 result=%d limited=%d", (int)r, limited("cuGetProcAddress_v2", v2));
  gpa2 = (gpa2_t)v2; /* continue through what the driver handed back, as cudart does */

  void *lk = NULL, *lkp = NULL, *init = NULL, *getfn = NULL, *sync = NULL, *ctx = NULL, *dev = NULL;
  r = gpa2("cuLaunchKernel", &lk, 4000, 0, &st);
  CHECK(r == CUDA_SUCCESS, "cuLaunchKernel@4000/0 result=%d limited=%d", (int)r, limited("cuLaunchKernel", lk));
  r = gpa2("cuLaunchKernel", &lkp, 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
  CHECK(r == CUDA_SUCCESS, "cuLaunchKernel@7000/2 result=%d limited=%d ptsz=%d", (int)r,
        limited("cuLaunchKernel_ptsz", lkp), limited("cuLaunchKernel_ptsz", lkp) || lkp == dlsym(h, "cuLaunchKernel_ptsz"));
  r = gpa2("cuLaunchKernelEx", &p, 11000, 0, &st);
  CHECK(r == CUDA_ERROR_NOT_FOUND && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
        "cuLaunchKernelEx@11000 result=%d status=%d", (int)r, (int)st);
  r = gpa2("cuLaunchKernel", &p, 7000, 0, NULL); /* symbolStatus may be NULL */
  CHECK(r == CUDA_SUCCESS, "null_status result=%d", (int)r);
  r = gpa2("cuInit", &init, 2000, 0, &st);
  CHECK(r == CUDA_SUCCESS, "cuInit@2000 result=%d limited=%d", (int)r, limited("cuInit", init));

  /* CUDA 13 resolves cuCtxSynchronize at version 13000 to cuCtxSynchronize_v2 (a context argument) */
  void *cs1 = NULL, *cs13 = NULL;
  r = gpa2("cuCtxSynchronize", &cs1, 2000, 0, &st);
  CHECK(r == CUDA_SUCCESS, "cuCtxSynchronize@2000 result=%d limited=%d", (int)r, limited("cuCtxSynchronize", cs1));
  r = gpa2("cuCtxSynchronize", &cs13, 13000, 0, &st);
  CHECK(r == CUDA_SUCCESS, "cuCtxSynchronize@13000 result=%d limited=%d v2=%d", (int)r, limited("cuCtxSynchronize_v2", cs13),
        limited("cuCtxSynchronize_v2", cs13) || cs13 == dlsym(h, "cuCtxSynchronize_v2"));

  /* the other launch, synchronize and allocation entry points a CUDA 12/13 runtime may resolve */
  static const struct { const char *name; int ver; cuuint64_t flags; const char *export_name; } more[] = {
    {"cuEventSynchronize", 2000, 0, "cuEventSynchronize"},
    {"cuEventSynchronize", 13000, 0, "cuEventSynchronize"},
    {"cuLaunch", 2000, 0, "cuLaunch"},
    {"cuLaunchGrid", 2000, 0, "cuLaunchGrid"},
    {"cuLaunchGridAsync", 2000, 0, "cuLaunchGridAsync"},
    {"cuLaunchCooperativeKernelMultiDevice", 9000, 0, "cuLaunchCooperativeKernelMultiDevice"},
    {"cuLaunchKernelEx", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernelEx_ptsz"},
    {"cuGraphLaunch", 13000, 0, "cuGraphLaunch"},
    {"cuStreamSynchronize", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuStreamSynchronize_ptsz"},
    {"cuMemAllocFromPoolAsync", 11020, 0, "cuMemAllocFromPoolAsync"},
    {"cuMemAllocFromPoolAsync", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemAllocFromPoolAsync_ptsz"},
    {"cuMemCreate", 10020, 0, "cuMemCreate"},
    {"cuMemRelease", 10020, 0, "cuMemRelease"},
    {"cuMemAlloc", 13000, 0, "cuMemAlloc_v2"},
    {"cuMemFree", 13000, 0, "cuMemFree_v2"},
  };
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    void *q = NULL;
    r = gpa2(more[i].name, &q, more[i].ver, more[i].flags, &st);
    CHECK(r == CUDA_SUCCESS, "%s@%d/%d result=%d limited=%d", more[i].name, more[i].ver, (int)more[i].flags, (int)r,
          limited(more[i].export_name, q));
  }

  /* legacy 4-argument cuGetProcAddress must still work */
  gpa1_t gpa1 = (gpa1_t)v1;
  void *lk1 = NULL;
  r = gpa1("cuLaunchKernel", &lk1, 4000, 0);
  CHECK(r == CUDA_SUCCESS, "legacy_gpa cuLaunchKernel result=%d limited=%d", (int)r, limited("cuLaunchKernel", lk1));

  /* launch through both: the stub log shows which variant ran */
  gpa2("cuModuleGetFunction", &getfn, 2000, 0, &st);
  gpa2("cuStreamSynchronize", &sync, 2000, 0, &st);
  gpa2("cuDevicePrimaryCtxRetain", &ctx, 7000, 0, &st);
  gpa2("cuDeviceGet", &dev, 2000, 0, &st);
  ((CUresult(*)(unsigned))init)(0);
  CUfunction f;
  ((CUresult(*)(CUfunction *, CUmodule, const char *))getfn)(&f, NULL, "k_100us");
  r = ((launch_t)lk)(f, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
  CHECK(r == CUDA_SUCCESS, "launch_legacy result=%d", (int)r);
  r = ((launch_t)lkp)(f, 3, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
  CHECK(r == CUDA_SUCCESS, "launch_ptsz result=%d", (int)r);
  ((CUresult(*)(CUstream))sync)(NULL);
  r = ((CUresult(*)(CUcontext))cs13)(NULL);
  CHECK(r == CUDA_SUCCESS, "ctx_sync_v2 result=%d", (int)r);
  return g_fail;
}
