/* The interception layer: dlsym, cuGetProcAddress[_v2] and the exported hooks.
 * The token logic lives in budget.c, the memory cap in memlimit.c. */
#define _GNU_SOURCE
#include <cuda.h>
#if CUDA_VERSION < 13000 /* CUDA 13's entry point, declared for older headers */
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx);
#endif
/* exported by the driver; cuda.h names them only through #defines or behind
 * __CUDA_API_PER_THREAD_DEFAULT_STREAM */
CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s);

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "limiter.h"
#include "gate.h"
#include "meter.h"

enum tl_hook_id {
#define TL_HOOK(name, group) HK_##name,
#include "hooks.def"
#undef TL_HOOK
  HK_COUNT
};

#define TL_HOOK(name, group) TL_API __typeof__(name) name;
#include "hooks.def"
#undef TL_HOOK

struct tl_hook {
  const char *name;
  void *hook;           /* our function */
  _Atomic(void *) real; /* the driver's, resolved from libcuda.so.1 */
};

static struct tl_hook g_hooks[HK_COUNT] = {
#define TL_HOOK(name, group) [HK_##name] = {#name, (void *)name, NULL},
#include "hooks.def"
#undef TL_HOOK
};

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn g_real_dlsym;
static _Atomic uint64_t g_swapped, g_unswapped, g_dlsym_hooked;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#define REAL(name) ((__typeof__(name) *)atomic_load_explicit(&g_hooks[HK_##name].real, memory_order_acquire))

/* glibc >= 2.34 versions dlsym GLIBC_2.34; older ones GLIBC_2.2.5 (x86-64).
 * dlvsym is not hooked, so this cannot recurse into our dlsym. */
static dlsym_fn real_dlsym(void) {
  dlsym_fn f = g_real_dlsym;
  if (f) return f;
  f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!f) f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  g_real_dlsym = f;
  return f;
}

static int is_our_hook(const void *p) {
  for (int i = 0; i < HK_COUNT; i++)
    if (g_hooks[i].hook == p) return 1;
  return 0;
}

static int hook_index(const char *name) {
  if (!name || name[0] != 'c' || name[1] != 'u') return -1;
  for (int i = 0; i < HK_COUNT; i++)
    if (strcmp(g_hooks[i].name, name) == 0) return i;
  return -1;
}

static void set_real(int i, void *p) {
  void *expected = NULL;
  if (p && !is_our_hook(p)) atomic_compare_exchange_strong(&g_hooks[i].real, &expected, p);
}

static void resolve_reals(void) {
  dlsym_fn ds = real_dlsym();
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!h || !ds) {
    tl_log("libcuda.so.1 not loadable: %s", dlerror());
    return;
  }
  for (int i = 0; i < HK_COUNT; i++) set_real(i, ds(h, g_hooks[i].name));
  /* the handle stays open for the life of the process, as the driver does */
}

/* The driver functions the meter calls: resolved, never hooked. */
static void resolve_meter(void) {
  dlsym_fn ds = real_dlsym();
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  struct tl_event_api api = {0};
  if (h && ds) {
    api.create = (__typeof__(api.create))ds(h, "cuEventCreate");
    api.record = (__typeof__(api.record))ds(h, "cuEventRecord");
    api.query = (__typeof__(api.query))ds(h, "cuEventQuery");
    api.elapsed = (__typeof__(api.elapsed))ds(h, "cuEventElapsedTime_v2");
    if (!api.elapsed) api.elapsed = (__typeof__(api.elapsed))ds(h, "cuEventElapsedTime");
    api.destroy = (__typeof__(api.destroy))ds(h, "cuEventDestroy_v2");
    api.ctx_current = (__typeof__(api.ctx_current))ds(h, "cuCtxGetCurrent");
    api.is_capturing = (__typeof__(api.is_capturing))ds(h, "cuStreamIsCapturing");
    api.stream_query = (__typeof__(api.stream_query))ds(h, "cuStreamQuery");
    api.func_name = (__typeof__(api.func_name))ds(h, "cuFuncGetName");
    api.kernel_name = (__typeof__(api.kernel_name))ds(h, "cuKernelGetName");
  }
  if (!tl_cfg.ns_per_block && !(api.create && api.record && api.query && api.elapsed && api.ctx_current))
    tl_log("driver without CUDA events: launch costs stay at the average guess");
  tl_meter_init(&api, tl_cfg.ns_per_block, tl_cfg.sample_every, tl_cfg.costs_path[0] != 0);
  struct tl_gate_api gate = {0};
  if (h && ds) {
    gate.wait_value = (__typeof__(gate.wait_value))ds(h, "cuStreamWaitValue32_v2");
    if (!gate.wait_value) gate.wait_value = (__typeof__(gate.wait_value))ds(h, "cuStreamWaitValue32");
    gate.host_alloc = (__typeof__(gate.host_alloc))ds(h, "cuMemHostAlloc");
    gate.host_dptr = (__typeof__(gate.host_dptr))ds(h, "cuMemHostGetDevicePointer_v2");
  }
  tl_gate_init(&gate, tl_cfg.gate && !tl_cfg.ns_per_block && tl_cfg.sample_every);
}

static void init_once(void) {
  tl_init();
  resolve_reals();
  resolve_meter();
}

static inline void ensure_init(void) { pthread_once(&g_once, init_once); }

/* RTLD_NEXT must search after the *caller's* object, not after liblimiter:
 * walk the link map in load order and look in each object after the caller. */
struct next_search { const void *caller; const char *name; int past; void *found; };

static int next_cb(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  struct next_search *s = arg;
  if (s->found) return 1;
  if (!s->past) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
      const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
      if (ph->p_type == PT_LOAD && (uintptr_t)s->caller >= lo && (uintptr_t)s->caller < lo + ph->p_memsz) {
        s->past = 1;
        break;
      }
    }
    return 0;
  }
  void *h = dlopen(info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return 0;
  s->found = real_dlsym()(h, s->name);
  dlclose(h);
  return s->found != NULL;
}

static void *dlsym_next(const void *caller, const char *name) {
  struct next_search s = {caller, name, 0, NULL};
  dl_iterate_phdr(next_cb, &s);
  return s.found;
}

TL_API void *dlsym(void *handle, const char *name) {
  dlsym_fn ds = real_dlsym();
  if (!ds) return NULL;
  void *p = handle == RTLD_NEXT ? dlsym_next(__builtin_return_address(0), name) : ds(handle, name);
  int i = hook_index(name);
  if (i < 0 || !p || is_our_hook(p)) return p;
  ensure_init();
  set_real(i, p);
  atomic_fetch_add_explicit(&g_dlsym_hooked, 1, memory_order_relaxed);
  tl_log("dlsym %s -> limiter", name);
  return g_hooks[i].hook;
}

/* Swap a pointer returned by the real cuGetProcAddress by identity. */
static void *swap_pointer(void *p, const char *sym, int ver, cuuint64_t flags, const char *via) {
  for (int i = 0; i < HK_COUNT; i++) {
    if (p == atomic_load_explicit(&g_hooks[i].real, memory_order_acquire)) {
      atomic_fetch_add_explicit(&g_swapped, 1, memory_order_relaxed);
      tl_log("swap %s ver=%d flags=%llu -> %s via %s", sym, ver, (unsigned long long)flags, g_hooks[i].name, via);
      return g_hooks[i].hook;
    }
  }
  /* a hooked name that came back as an unknown pointer is not limited: say so */
  size_t n = strlen(sym);
  for (int i = 0; i < HK_COUNT; i++) {
    if (strncmp(g_hooks[i].name, sym, n) == 0 && (g_hooks[i].name[n] == 0 || g_hooks[i].name[n] == '_')) {
      atomic_fetch_add_explicit(&g_unswapped, 1, memory_order_relaxed);
      tl_log("unswapped %s ver=%d flags=%llu: pointer %p is no known driver export", sym, ver,
             (unsigned long long)flags, p);
      break;
    }
  }
  return p;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status) {
  ensure_init();
  __typeof__(cuGetProcAddress_v2) *real = REAL(cuGetProcAddress_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real(symbol, pfn, ver, flags, status);
  if (r == CUDA_SUCCESS && symbol && pfn && *pfn) *pfn = swap_pointer(*pfn, symbol, ver, flags, "cuGetProcAddress_v2");
  return r;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags) {
  ensure_init();
  __typeof__(cuGetProcAddress) *real = REAL(cuGetProcAddress);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real(symbol, pfn, ver, flags);
  if (r == CUDA_SUCCESS && symbol && pfn && *pfn) *pfn = swap_pointer(*pfn, symbol, ver, flags, "cuGetProcAddress");
  return r;
}

/* ---- launches: the meter charges the budget, then the real function runs ---- */
#define LAUNCH_PARAMS CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
  unsigned bz, unsigned shm, CUstream s
#define LAUNCH_ARGS f, gx, gy, gz, bx, by, bz, shm, s
#define REAL_OR_FAIL(name)                                                            \
  __typeof__(name) *real = REAL(name);                                                \
  if (__builtin_expect(!real, 0)) { ensure_init(); real = REAL(name); }               \
  if (!real) return CUDA_ERROR_NOT_INITIALIZED

/* key, units, graph, stream, ptsz: what the meter needs; call: the real call */
#define METERED(key, units, graph, stream, ptsz, call)                                \
  struct tl_launch l_;                                                                \
  tl_meter_begin(&l_, (uintptr_t)(key), (units), (graph), (stream), (ptsz));          \
  CUresult r_ = call;                                                                 \
  tl_meter_end(&l_, r_);                                                              \
  return r_

#define LAUNCH_HOOK(name, ptsz, extra_params, extra_args)                             \
  CUresult name(LAUNCH_PARAMS extra_params) {                                         \
    REAL_OR_FAIL(name);                                                               \
    METERED(f, (uint64_t)gx * gy * gz, 0, s, ptsz, real(LAUNCH_ARGS extra_args));     \
  }
#define COMMA ,
LAUNCH_HOOK(cuLaunchKernel, 0, COMMA void **kp COMMA void **ex, COMMA kp COMMA ex)
LAUNCH_HOOK(cuLaunchKernel_ptsz, 1, COMMA void **kp COMMA void **ex, COMMA kp COMMA ex)
LAUNCH_HOOK(cuLaunchCooperativeKernel, 0, COMMA void **kp, COMMA kp)
LAUNCH_HOOK(cuLaunchCooperativeKernel_ptsz, 1, COMMA void **kp, COMMA kp)

#define LAUNCH_EX_HOOK(name, ptsz)                                                    \
  CUresult name(const CUlaunchConfig *c, CUfunction f, void **kp, void **ex) {        \
    REAL_OR_FAIL(name);                                                               \
    if (!c) return real(c, f, kp, ex);                                                \
    METERED(f, (uint64_t)c->gridDimX * c->gridDimY * c->gridDimZ, 0, c->hStream, ptsz, real(c, f, kp, ex)); \
  }
LAUNCH_EX_HOOK(cuLaunchKernelEx, 0)
LAUNCH_EX_HOOK(cuLaunchKernelEx_ptsz, 1)

#define GRAPH_HOOK(name, ptsz)                                                        \
  CUresult name(CUgraphExec g, CUstream s) {                                          \
    REAL_OR_FAIL(name);                                                               \
    METERED(g, 1, 1, s, ptsz, real(g, s));                                            \
  }
GRAPH_HOOK(cuGraphLaunch, 0)
GRAPH_HOOK(cuGraphLaunch_ptsz, 1)

/* the pre-4.0 launch API: cuLaunch runs a 1 x 1 grid on the legacy stream */
CUresult cuLaunch(CUfunction f) {
  REAL_OR_FAIL(cuLaunch);
  METERED(f, 1, 0, NULL, 0, real(f));
}
CUresult cuLaunchGrid(CUfunction f, int w, int h) {
  REAL_OR_FAIL(cuLaunchGrid);
  METERED(f, (uint64_t)(w > 0 ? w : 1) * (uint64_t)(h > 0 ? h : 1), 0, NULL, 0, real(f, w, h));
}
CUresult cuLaunchGridAsync(CUfunction f, int w, int h, CUstream s) {
  REAL_OR_FAIL(cuLaunchGridAsync);
  METERED(f, (uint64_t)(w > 0 ? w : 1) * (uint64_t)(h > 0 ? h : 1), 0, s, 0, real(f, w, h, s));
}
/* deprecated, several devices: each entry is charged (not sampled: other contexts) */
CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *p, unsigned n, unsigned flags) {
  REAL_OR_FAIL(cuLaunchCooperativeKernelMultiDevice);
  uint64_t blocks = 0;
  for (unsigned i = 0; p && i < n; i++) blocks += (uint64_t)p[i].gridDimX * p[i].gridDimY * p[i].gridDimZ;
  METERED(p && n ? p[0].function : NULL, blocks, 0, NULL, 0, real(p, n, flags));
}

/* ---- synchronize: completed samples are read here ---- */
#define SYNC_HOOK(name, params, args)                                                 \
  CUresult name params {                                                              \
    ensure_init();                                                                    \
    __typeof__(name) *real = REAL(name);                                              \
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;                                     \
    CUresult r = real args;                                                           \
    if (r == CUDA_SUCCESS) tl_meter_harvest();                                        \
    return r;                                                                         \
  }
SYNC_HOOK(cuStreamSynchronize, (CUstream s), (s))
SYNC_HOOK(cuStreamSynchronize_ptsz, (CUstream s), (s))
SYNC_HOOK(cuCtxSynchronize, (void), ())
SYNC_HOOK(cuCtxSynchronize_v2, (CUcontext c), (c)) /* CUDA 13's, resolved at version 13000 */
SYNC_HOOK(cuEventSynchronize, (CUevent e), (e))     /* how frameworks wait for a request */

/* ---- memory: reserve against the cap, then allocate ---- */
#define ALLOC_HOOK(name, params, args, bytes)                                         \
  CUresult name params {                                                              \
    ensure_init();                                                                    \
    __typeof__(name) *real = REAL(name);                                              \
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;                                     \
    if (tl_mem_reserve(bytes) != 0) return CUDA_ERROR_OUT_OF_MEMORY;                  \
    CUresult r = real args;                                                           \
    if (r != CUDA_SUCCESS) tl_mem_unreserve(bytes);                                   \
    else tl_mem_record((uint64_t)*d, bytes);                                          \
    return r;                                                                         \
  }
ALLOC_HOOK(cuMemAlloc_v2, (CUdeviceptr *d, size_t n), (d, n), n)
ALLOC_HOOK(cuMemAllocManaged, (CUdeviceptr *d, size_t n, unsigned fl), (d, n, fl), n)
ALLOC_HOOK(cuMemAllocAsync, (CUdeviceptr *d, size_t n, CUstream s), (d, n, s), n)
ALLOC_HOOK(cuMemAllocAsync_ptsz, (CUdeviceptr *d, size_t n, CUstream s), (d, n, s), n)
ALLOC_HOOK(cuMemAllocFromPoolAsync, (CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s), (d, n, p, s), n)
ALLOC_HOOK(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s), (d, n, p, s), n)
/* the driver may pad rows; the cap counts the requested width * height */
ALLOC_HOOK(cuMemAllocPitch_v2, (CUdeviceptr *d, size_t *pitch, size_t w, size_t h, unsigned e), (d, pitch, w, h, e),
           (uint64_t)w * h)

#define FREE_HOOK(name, params, args)                                                 \
  CUresult name params {                                                              \
    ensure_init();                                                                    \
    __typeof__(name) *real = REAL(name);                                              \
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;                                     \
    CUresult r = real args;                                                           \
    if (r == CUDA_SUCCESS) tl_mem_release((uint64_t)d);                               \
    return r;                                                                         \
  }
FREE_HOOK(cuMemFree_v2, (CUdeviceptr d), (d))
FREE_HOOK(cuMemFreeAsync, (CUdeviceptr d, CUstream s), (d, s))
FREE_HOOK(cuMemFreeAsync_ptsz, (CUdeviceptr d, CUstream s), (d, s))

/* virtual memory management: physical memory is created as a handle and mapped
 * elsewhere; the cap counts it at creation (handles are kept apart from device
 * pointers in the size table by their top bit) */
#define TL_HANDLE_TAG (1ull << 63)
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop, unsigned long long fl) {
  ensure_init();
  __typeof__(cuMemCreate) *real = REAL(cuMemCreate);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  if (tl_mem_reserve(n) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = real(h, n, prop, fl);
  if (r != CUDA_SUCCESS || !h) tl_mem_unreserve(n);
  else tl_mem_record((uint64_t)*h | TL_HANDLE_TAG, n);
  return r;
}
CUresult cuMemRelease(CUmemGenericAllocationHandle h) {
  ensure_init();
  __typeof__(cuMemRelease) *real = REAL(cuMemRelease);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real(h);
  if (r == CUDA_SUCCESS) tl_mem_release((uint64_t)h | TL_HANDLE_TAG);
  return r;
}

CUresult cuMemGetInfo_v2(size_t *fr, size_t *tot) {
  ensure_init();
  __typeof__(cuMemGetInfo_v2) *real = REAL(cuMemGetInfo_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real(fr, tot);
  uint64_t lim = tl_cfg.mem_limit;
  if (r != CUDA_SUCCESS || lim == 0) return r;
  uint64_t used = tl_mem_used(), left = used >= lim ? 0 : lim - used;
  if (tot && *tot > lim) *tot = (size_t)lim;
  if (fr && *fr > left) *fr = (size_t)left;
  return r;
}

void tl_hooks_stats(struct tl_stats *st) {
  st->swapped = atomic_load(&g_swapped);
  st->unswapped = atomic_load(&g_unswapped);
  st->dlsym_hooked = atomic_load(&g_dlsym_hooked);
}
