/* A fake libcuda.so.1 for tests on machines without a GPU.
 *
 * Build: -D__CUDA_API_VERSION_INTERNAL (so cuda.h declares the legacy, _v2 and
 * _ptsz names instead of renaming them), link -Wl,-soname,libcuda.so.1,-Bsymbolic
 * (so the table that cuGetProcAddress hands out points at this library's own
 * functions, never at a preloaded interposer's; without it the limiter would
 * see its own hooks come back and a test would pass falsely).
 *
 * Kernels do no work: each launch books its duration on a virtual timeline per
 * stream (legacy default stream, one per-thread default stream per thread for
 * the _ptsz variants, and created streams), and, when STUB_CUDA_SHM names a
 * file, on one device timeline shared by every process (a GPU without MPS runs
 * one context at a time). Synchronize calls sleep until the timeline's end.
 * The duration of a kernel is parsed from its name ("k_1000us") or taken from
 * STUB_KERNEL_US (default 100). STUB_CUDA_LOG names a file that gets one line
 * per driver call: "<pid> <call> <detail>".
 */
#include <cuda.h>
#if CUDA_VERSION < 13000 /* CUDA 13's entry point, declared for older headers */
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx);
#endif

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define STUB_MAGIC 0x53545542u
#define STUB_SHM_VERSION 1u
#define STUB_QUEUE_NS 50000000ull /* launch queue depth, as time: 50 ms */

struct stub_shared {  /* the shared device timeline file */
  uint32_t magic, version;
  _Atomic uint64_t busy_until;
  uint64_t pad[6];
};

struct stub_stream { uint32_t magic; _Atomic uint64_t busy_until; };
struct stub_func { uint32_t magic; uint64_t dur_ns; char name[64]; };
struct stub_graph { uint32_t magic; uint64_t dur_ns; unsigned nodes; };

static struct stub_shared *g_shm;
static struct stub_shared g_local; /* device timeline when no file is shared */
static struct stub_stream g_legacy = {STUB_MAGIC, 0};
static __thread struct stub_stream t_ptds = {STUB_MAGIC, 0};
static _Atomic uint64_t g_last_end; /* latest end over all streams (ctx sync) */
static _Atomic uint64_t g_mem_used, g_next_addr = 0x100000000ull;
static const uint64_t g_mem_total = 16ull << 30;
static uint64_t g_default_ns = 100000;
static FILE *g_log;
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_inited;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Like a driver's synchronize: sleep, then spin the last 100 us so the caller
 * wakes when the work ends, not a scheduler tick later. */
static void sleep_until(uint64_t t) {
  if (t > 100000) {
    uint64_t s = t - 100000;
    struct timespec ts = {(time_t)(s / 1000000000ull), (long)(s % 1000000000ull)};
    while (now_ns() < s && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
  }
  while (now_ns() < t) {}
}

static void slog(const char *call, const char *fmt, ...) {
  if (!g_log) return;
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&g_log_mu);
  fprintf(g_log, "%d %s %s\n", (int)getpid(), call, buf);
  fflush(g_log);
  pthread_mutex_unlock(&g_log_mu);
}

__attribute__((constructor)) static void stub_init(void) {
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  const char *p = getenv("STUB_CUDA_LOG");
  if (p && *p) g_log = fopen(p, "a");
  const char *us = getenv("STUB_KERNEL_US");
  if (us && *us) g_default_ns = strtoull(us, NULL, 10) * 1000ull;
  g_shm = &g_local;
  const char *shm = getenv("STUB_CUDA_SHM");
  if (shm && *shm) {
    int fd = open(shm, O_RDWR | O_CREAT, 0600);
    if (fd >= 0 && ftruncate(fd, sizeof(struct stub_shared)) == 0) {
      void *m = mmap(NULL, sizeof(struct stub_shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m != MAP_FAILED) g_shm = m;
    }
    if (fd >= 0) close(fd);
  }
  g_shm->magic = STUB_MAGIC; /* benign race: every writer stores the same values */
  g_shm->version = STUB_SHM_VERSION;
}

static struct stub_stream *stream_of(CUstream s, int ptds) {
  if (s == NULL) return ptds ? &t_ptds : &g_legacy;
  if (s == CU_STREAM_LEGACY) return &g_legacy;
  if (s == CU_STREAM_PER_THREAD) return &t_ptds;
  struct stub_stream *st = (struct stub_stream *)s;
  return st->magic == STUB_MAGIC ? st : &g_legacy;
}

static uint64_t func_ns(CUfunction f) {
  const struct stub_func *fn = (const struct stub_func *)f;
  return fn && fn->magic == STUB_MAGIC ? fn->dur_ns : g_default_ns;
}

/* Book `dur` on the stream and the device timeline; block while the queue is full. */
static CUresult exec_on(CUstream s, int ptds, uint64_t dur, const char *call, unsigned blocks) {
  struct stub_stream *st = stream_of(s, ptds);
  uint64_t now = now_ns();
  uint64_t sb = atomic_load(&st->busy_until);
  if (sb > now + STUB_QUEUE_NS) { sleep_until(sb - STUB_QUEUE_NS); now = now_ns(); }
  uint64_t dev = atomic_load(&g_shm->busy_until), start, end;
  do {
    start = now;
    if (sb > start) start = sb;
    if (dev > start) start = dev;
    end = start + dur;
  } while (!atomic_compare_exchange_weak(&g_shm->busy_until, &dev, end));
  atomic_store(&st->busy_until, end);
  uint64_t last = atomic_load(&g_last_end);
  while (last < end && !atomic_compare_exchange_weak(&g_last_end, &last, end)) {}
  slog(call, "stream=%p ptds=%d blocks=%u dur_ns=%llu start=%llu", (void *)s, ptds, blocks,
       (unsigned long long)dur, (unsigned long long)start);
  return CUDA_SUCCESS;
}

#define LAUNCH_ARGS CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
  unsigned bz, unsigned shm, CUstream s
CUresult cuLaunchKernel(LAUNCH_ARGS, void **kp, void **ex) {
  (void)bx; (void)by; (void)bz; (void)shm; (void)kp; (void)ex;
  return exec_on(s, 0, func_ns(f), "cuLaunchKernel", gx * gy * gz);
}
CUresult cuLaunchKernel_ptsz(LAUNCH_ARGS, void **kp, void **ex) {
  (void)bx; (void)by; (void)bz; (void)shm; (void)kp; (void)ex;
  return exec_on(s, 1, func_ns(f), "cuLaunchKernel_ptsz", gx * gy * gz);
}
CUresult cuLaunchCooperativeKernel(LAUNCH_ARGS, void **kp) {
  (void)bx; (void)by; (void)bz; (void)shm; (void)kp;
  return exec_on(s, 0, func_ns(f), "cuLaunchCooperativeKernel", gx * gy * gz);
}
CUresult cuLaunchCooperativeKernel_ptsz(LAUNCH_ARGS, void **kp) {
  (void)bx; (void)by; (void)bz; (void)shm; (void)kp;
  return exec_on(s, 1, func_ns(f), "cuLaunchCooperativeKernel_ptsz", gx * gy * gz);
}
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **kp, void **ex) {
  (void)kp; (void)ex;
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  return exec_on(c->hStream, 0, func_ns(f), "cuLaunchKernelEx", c->gridDimX * c->gridDimY * c->gridDimZ);
}
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **kp, void **ex) {
  (void)kp; (void)ex;
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  return exec_on(c->hStream, 1, func_ns(f), "cuLaunchKernelEx_ptsz", c->gridDimX * c->gridDimY * c->gridDimZ);
}

CUresult cuGraphCreate(CUgraph *g, unsigned int flags) {
  (void)flags;
  struct stub_graph *gr = calloc(1, sizeof *gr);
  if (!gr) return CUDA_ERROR_OUT_OF_MEMORY;
  gr->magic = STUB_MAGIC;
  *g = (CUgraph)gr;
  slog("cuGraphCreate", "%p", (void *)gr);
  return CUDA_SUCCESS;
}
CUresult cuGraphAddKernelNode_v2(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
                                 const CUDA_KERNEL_NODE_PARAMS *p) {
  (void)deps; (void)nd;
  struct stub_graph *gr = (struct stub_graph *)g;
  if (!gr || !p) return CUDA_ERROR_INVALID_VALUE;
  gr->dur_ns += func_ns(p->func);
  *n = (CUgraphNode)(uintptr_t)(++gr->nodes);
  slog("cuGraphAddKernelNode_v2", "graph=%p nodes=%u", (void *)gr, gr->nodes);
  return CUDA_SUCCESS;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags) {
  (void)flags;
  struct stub_graph *gr = (struct stub_graph *)g, *ex = malloc(sizeof *ex);
  if (!gr || !ex) { free(ex); return CUDA_ERROR_INVALID_VALUE; }
  *ex = *gr;
  *e = (CUgraphExec)ex;
  slog("cuGraphInstantiateWithFlags", "exec=%p dur_ns=%llu", (void *)ex, (unsigned long long)ex->dur_ns);
  return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
  return exec_on(s, 0, e ? ((struct stub_graph *)e)->dur_ns : 0, "cuGraphLaunch", 0);
}
CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s) {
  return exec_on(s, 1, e ? ((struct stub_graph *)e)->dur_ns : 0, "cuGraphLaunch_ptsz", 0);
}
CUresult cuGraphExecDestroy(CUgraphExec e) { slog("cuGraphExecDestroy", "%p", (void *)e); free(e); return CUDA_SUCCESS; }
CUresult cuGraphDestroy(CUgraph g) { slog("cuGraphDestroy", "%p", (void *)g); free(g); return CUDA_SUCCESS; }

static CUresult sync_stream(CUstream s, int ptds, const char *call) {
  sleep_until(atomic_load(&stream_of(s, ptds)->busy_until));
  slog(call, "stream=%p", (void *)s);
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream s) { return sync_stream(s, 0, "cuStreamSynchronize"); }
CUresult cuStreamSynchronize_ptsz(CUstream s) { return sync_stream(s, 1, "cuStreamSynchronize_ptsz"); }
CUresult cuCtxSynchronize(void) {
  sleep_until(atomic_load(&g_last_end));
  slog("cuCtxSynchronize", "-");
  return CUDA_SUCCESS;
}
/* CUDA 13: the context to wait for is an argument (NULL: the current one); the stub has one */
CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  sleep_until(atomic_load(&g_last_end));
  slog("cuCtxSynchronize_v2", "ctx=%p", (void *)ctx);
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *s, unsigned int flags) {
  struct stub_stream *st = calloc(1, sizeof *st);
  if (!st) return CUDA_ERROR_OUT_OF_MEMORY;
  st->magic = STUB_MAGIC;
  *s = (CUstream)st;
  slog("cuStreamCreate", "%p flags=%u", (void *)st, flags);
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream s) { slog("cuStreamDestroy_v2", "%p", (void *)s); free(s); return CUDA_SUCCESS; }

/* memory: addresses are never dereferenced, only counted */
static CUresult mem_alloc(CUdeviceptr *d, size_t n, const char *call) {
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  if (atomic_fetch_add(&g_mem_used, n) + n > g_mem_total) {
    atomic_fetch_sub(&g_mem_used, n);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *d = (CUdeviceptr)atomic_fetch_add(&g_next_addr, (n + 0xfff) & ~0xfffull);
  slog(call, "ptr=0x%llx bytes=%zu", (unsigned long long)*d, n);
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr *d, size_t n) { return mem_alloc(d, n, "cuMemAlloc_v2"); }
CUresult cuMemAllocManaged(CUdeviceptr *d, size_t n, unsigned f) { (void)f; return mem_alloc(d, n, "cuMemAllocManaged"); }
CUresult cuMemAllocPitch_v2(CUdeviceptr *d, size_t *pitch, size_t w, size_t h, unsigned e) {
  (void)e;
  if (pitch) *pitch = w;
  return mem_alloc(d, w * h, "cuMemAllocPitch_v2");
}
CUresult cuMemAllocAsync(CUdeviceptr *d, size_t n, CUstream s) { (void)s; return mem_alloc(d, n, "cuMemAllocAsync"); }
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *d, size_t n, CUstream s) { (void)s; return mem_alloc(d, n, "cuMemAllocAsync_ptsz"); }
/* The stub does not know sizes at free time; the limiter keeps its own table. */
CUresult cuMemFree_v2(CUdeviceptr d) { slog("cuMemFree_v2", "ptr=0x%llx", (unsigned long long)d); return CUDA_SUCCESS; }
CUresult cuMemFreeAsync(CUdeviceptr d, CUstream s) { (void)s; slog("cuMemFreeAsync", "ptr=0x%llx", (unsigned long long)d); return CUDA_SUCCESS; }
CUresult cuMemFreeAsync_ptsz(CUdeviceptr d, CUstream s) { (void)s; slog("cuMemFreeAsync_ptsz", "ptr=0x%llx", (unsigned long long)d); return CUDA_SUCCESS; }
CUresult cuMemGetInfo_v2(size_t *fr, size_t *tot) {
  uint64_t used = atomic_load(&g_mem_used);
  if (fr) *fr = used > g_mem_total ? 0 : g_mem_total - used;
  if (tot) *tot = g_mem_total;
  slog("cuMemGetInfo_v2", "-");
  return CUDA_SUCCESS;
}

/* device and context plumbing, enough for small programs */
CUresult cuInit(unsigned int flags) { g_inited = 1; slog("cuInit", "flags=%u", flags); return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int *v) { if (v) *v = CUDA_VERSION; slog("cuDriverGetVersion", "-"); return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *n) { if (n) *n = 1; slog("cuDeviceGetCount", "-"); return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ord) { if (ord != 0) return CUDA_ERROR_INVALID_DEVICE; if (d) *d = 0; slog("cuDeviceGet", "%d", ord); return CUDA_SUCCESS; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d) { (void)d; if (name && len > 0) snprintf(name, (size_t)len, "mlfaas stub GPU"); return CUDA_SUCCESS; }
CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) { (void)d; if (b) *b = g_mem_total; return CUDA_SUCCESS; }
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice d) {
  (void)d;
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 8; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 108; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
    default: *pi = 1; break;
  }
  return CUDA_SUCCESS;
}
static int g_ctx_token;
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; if (c) *c = (CUcontext)&g_ctx_token; slog("cuDevicePrimaryCtxRetain", "-"); return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; return CUDA_SUCCESS; }
CUresult cuCtxCreate_v2(CUcontext *c, unsigned int flags, CUdevice d) { (void)flags; (void)d; if (c) *c = (CUcontext)&g_ctx_token; slog("cuCtxCreate_v2", "-"); return CUDA_SUCCESS; }
CUresult cuCtxDestroy_v2(CUcontext c) { (void)c; return CUDA_SUCCESS; }
static __thread CUcontext t_ctx;
CUresult cuCtxSetCurrent(CUcontext c) { t_ctx = c; return CUDA_SUCCESS; }
CUresult cuCtxGetCurrent(CUcontext *c) { if (c) *c = t_ctx; return CUDA_SUCCESS; }
CUresult cuCtxGetDevice(CUdevice *d) { if (d) *d = 0; return CUDA_SUCCESS; }
CUresult cuModuleLoadData(CUmodule *m, const void *img) { (void)img; if (m) *m = (CUmodule)&g_ctx_token; slog("cuModuleLoadData", "-"); return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  (void)m;
  struct stub_func *fn = calloc(1, sizeof *fn);
  if (!fn || !f || !name) { free(fn); return CUDA_ERROR_INVALID_VALUE; }
  fn->magic = STUB_MAGIC;
  snprintf(fn->name, sizeof fn->name, "%s", name);
  unsigned long long us = 0;
  fn->dur_ns = sscanf(name, "k_%lluus", &us) == 1 ? us * 1000ull : g_default_ns;
  *f = (CUfunction)fn; /* leaked on purpose: functions live as long as the module */
  slog("cuModuleGetFunction", "%s dur_ns=%llu", name, (unsigned long long)fn->dur_ns);
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult e, const char **s) { if (s) *s = e ? "stub error" : "no error"; return CUDA_SUCCESS; }
CUresult cuGetErrorName(CUresult e, const char **s) { if (s) *s = e ? "CUDA_ERROR" : "CUDA_SUCCESS"; return CUDA_SUCCESS; }
CUresult cuGetExportTable(const void **t, const CUuuid *id) { (void)id; if (t) *t = NULL; slog("cuGetExportTable", "-"); return CUDA_ERROR_NOT_FOUND; }

/* cuGetProcAddress: the highest entry of a name whose version <= the caller's;
 * the per-thread variant when flags ask for it. */
struct stub_sym { const char *name; int version; void *legacy, *ptsz; };
#define P(f) ((void *)(f))
static const struct stub_sym g_syms[] = {
  {"cuGetProcAddress", 11030, P(cuGetProcAddress), NULL},
  {"cuGetProcAddress", 12000, P(cuGetProcAddress_v2), NULL},
  {"cuLaunchKernel", 4000, P(cuLaunchKernel), P(cuLaunchKernel_ptsz)},
  {"cuLaunchKernelEx", 11060, P(cuLaunchKernelEx), P(cuLaunchKernelEx_ptsz)},
  {"cuLaunchCooperativeKernel", 9000, P(cuLaunchCooperativeKernel), P(cuLaunchCooperativeKernel_ptsz)},
  {"cuGraphLaunch", 10000, P(cuGraphLaunch), P(cuGraphLaunch_ptsz)},
  {"cuGraphCreate", 10000, P(cuGraphCreate), NULL},
  {"cuGraphAddKernelNode", 12000, P(cuGraphAddKernelNode_v2), NULL},
  {"cuGraphInstantiateWithFlags", 11040, P(cuGraphInstantiateWithFlags), NULL},
  {"cuGraphExecDestroy", 10000, P(cuGraphExecDestroy), NULL},
  {"cuGraphDestroy", 10000, P(cuGraphDestroy), NULL},
  {"cuStreamSynchronize", 2000, P(cuStreamSynchronize), P(cuStreamSynchronize_ptsz)},
  {"cuCtxSynchronize", 2000, P(cuCtxSynchronize), NULL},
  {"cuCtxSynchronize", 13000, P(cuCtxSynchronize_v2), NULL}, /* what a CUDA 13 runtime gets, as from the real driver */
  {"cuStreamCreate", 2000, P(cuStreamCreate), NULL},
  {"cuStreamDestroy", 4000, P(cuStreamDestroy_v2), NULL},
  {"cuMemAlloc", 3020, P(cuMemAlloc_v2), NULL},
  {"cuMemAllocManaged", 6000, P(cuMemAllocManaged), NULL},
  {"cuMemAllocPitch", 3020, P(cuMemAllocPitch_v2), NULL},
  {"cuMemAllocAsync", 11020, P(cuMemAllocAsync), P(cuMemAllocAsync_ptsz)},
  {"cuMemFree", 3020, P(cuMemFree_v2), NULL},
  {"cuMemFreeAsync", 11020, P(cuMemFreeAsync), P(cuMemFreeAsync_ptsz)},
  {"cuMemGetInfo", 3020, P(cuMemGetInfo_v2), NULL},
  {"cuInit", 2000, P(cuInit), NULL},
  {"cuDriverGetVersion", 2020, P(cuDriverGetVersion), NULL},
  {"cuDeviceGetCount", 2000, P(cuDeviceGetCount), NULL},
  {"cuDeviceGet", 2000, P(cuDeviceGet), NULL},
  {"cuDeviceGetName", 2000, P(cuDeviceGetName), NULL},
  {"cuDeviceTotalMem", 3020, P(cuDeviceTotalMem_v2), NULL},
  {"cuDeviceGetAttribute", 2000, P(cuDeviceGetAttribute), NULL},
  {"cuDevicePrimaryCtxRetain", 7000, P(cuDevicePrimaryCtxRetain), NULL},
  {"cuDevicePrimaryCtxRelease", 11000, P(cuDevicePrimaryCtxRelease_v2), NULL},
  {"cuCtxCreate", 3020, P(cuCtxCreate_v2), NULL},
  {"cuCtxDestroy", 4000, P(cuCtxDestroy_v2), NULL},
  {"cuCtxSetCurrent", 4000, P(cuCtxSetCurrent), NULL},
  {"cuCtxGetCurrent", 4000, P(cuCtxGetCurrent), NULL},
  {"cuCtxGetDevice", 2000, P(cuCtxGetDevice), NULL},
  {"cuModuleLoadData", 2000, P(cuModuleLoadData), NULL},
  {"cuModuleGetFunction", 2000, P(cuModuleGetFunction), NULL},
  {"cuGetErrorString", 6000, P(cuGetErrorString), NULL},
  {"cuGetErrorName", 6000, P(cuGetErrorName), NULL},
  {"cuGetExportTable", 3000, P(cuGetExportTable), NULL},
};

static CUresult proc_address(const char *sym, void **pfn, int ver, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status, const char *call) {
  const struct stub_sym *best = NULL;
  int known = 0;
  if (pfn) *pfn = NULL;
  for (size_t i = 0; sym && i < sizeof g_syms / sizeof g_syms[0]; i++) {
    if (strcmp(g_syms[i].name, sym) != 0) continue;
    known = 1;
    if (g_syms[i].version <= ver) best = &g_syms[i];
  }
  CUdriverProcAddressQueryResult st = best ? CU_GET_PROC_ADDRESS_SUCCESS
                                    : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                            : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (status) *status = st;
  slog(call, "sym=%s ver=%d flags=%llu status=%d", sym ? sym : "(null)", ver, (unsigned long long)flags, (int)st);
  if (!pfn || !sym) return CUDA_ERROR_INVALID_VALUE;
  if (!best) return CUDA_ERROR_NOT_FOUND;
  *pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best->ptsz ? best->ptsz : best->legacy;
  return CUDA_SUCCESS;
}
CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags) {
  return proc_address(sym, pfn, ver, flags, NULL, "cuGetProcAddress");
}
CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status) {
  return proc_address(sym, pfn, ver, flags, status, "cuGetProcAddress_v2");
}
