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
 *
 * Events are stamped when the device reaches them. Recorded on a stream that
 * still has work queued, an event is stamped with the end of that work (the
 * context is on the device then). Recorded on an idle stream, it is stamped at
 * once: with the later of the record time and the end of the work booked on
 * the device (as an H100 does: the next kernel's launch call is not in it yet).
 * Recorded on an idle stream held by cuStreamWaitValue32 on a value not yet
 * written, it is stamped with the start of the next kernel booked on that
 * stream, and the next event recorded after that kernel with the kernel's end;
 * the waiter is taken to be released then, as the limiter's sample gate is
 * (the kernel is booked when its launch call returns; that start may be later
 * than the record: behind other streams or other processes, as a time-sliced
 * GPU stamps it when the context is switched in). STUB_LAUNCH_NS: host time each launch call
 * takes before its kernel reaches the device (default 0; about 4000 on the
 * H100 machine measured). STUB_LAUNCH_SYNC=1: a launch into a held stream waits
 * until the waiter's value is written (as a launch that synchronizes does:
 * lazy module loading, CUDA_LAUNCH_BLOCKING), for at most 10 s. STUB_STATS_FILE, when set, gets the process's
 * ground truth at exit: kernels=, busy_ns= (device time of its kernels).
 */
#include <cuda.h>
#if CUDA_VERSION < 13000 /* CUDA 13's entry point, declared for older headers */
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx);
#endif
CUresult CUDAAPI cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b); /* cuda.h names it only by #define */

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

struct stub_event;
struct stub_stream { uint32_t magic; _Atomic uint64_t busy_until; struct stub_event *_Atomic pending; _Atomic int held; const uint32_t *_Atomic hold_word; _Atomic uint32_t hold_value; };
struct stub_func { uint32_t magic; uint64_t dur_ns; char name[64]; };
struct stub_graph { uint32_t magic; uint64_t dur_ns; unsigned nodes; };
struct stub_event { uint32_t magic; unsigned flags; _Atomic uint64_t ts; _Atomic int recorded; struct stub_stream *_Atomic on; };

static struct stub_shared *g_shm;
static struct stub_shared g_local; /* device timeline when no file is shared */
static struct stub_stream g_legacy = {STUB_MAGIC, 0, NULL, 0, NULL, 0};
static __thread struct stub_stream t_ptds = {STUB_MAGIC, 0, NULL, 0, NULL, 0};
static _Atomic uint64_t g_last_end; /* latest end over all streams (ctx sync) */
static _Atomic uint64_t g_mem_used, g_next_addr = 0x100000000ull;
static const uint64_t g_mem_total = 16ull << 30;
static uint64_t g_default_ns = 100000, g_launch_ns;
static int g_launch_sync; /* STUB_LAUNCH_SYNC=1: a launch waits until its stream's waiter is released */
static FILE *g_log;
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_inited;
static _Atomic uint64_t g_kernels, g_busy_ns; /* this process's ground truth */
static const char *g_stats_path;

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

static void write_stats(void) {
  FILE *f = g_stats_path ? fopen(g_stats_path, "w") : NULL;
  if (!f) return;
  fprintf(f, "kernels=%llu\nbusy_ns=%llu\n", (unsigned long long)atomic_load(&g_kernels),
          (unsigned long long)atomic_load(&g_busy_ns));
  fclose(f);
}

__attribute__((constructor)) static void stub_init(void) {
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  g_stats_path = getenv("STUB_STATS_FILE");
  if (g_stats_path && *g_stats_path) atexit(write_stats);
  const char *p = getenv("STUB_CUDA_LOG");
  if (p && *p) g_log = fopen(p, "a");
  const char *us = getenv("STUB_KERNEL_US");
  if (us && *us) g_default_ns = strtoull(us, NULL, 10) * 1000ull;
  const char *ln = getenv("STUB_LAUNCH_NS");
  if (ln && *ln) g_launch_ns = strtoull(ln, NULL, 10);
  const char *ls = getenv("STUB_LAUNCH_SYNC");
  g_launch_sync = ls && strcmp(ls, "1") == 0;
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
  if (g_launch_ns) { /* the launch call's host work: the kernel reaches the device at its end */
    uint64_t until = now + g_launch_ns;
    while ((now = now_ns()) < until) {}
  }
  if (g_launch_sync && atomic_load(&st->held) == 1) { /* as lazy module loading or CUDA_LAUNCH_BLOCKING */
    const uint32_t *w = atomic_load(&st->hold_word);
    uint32_t v = atomic_load(&st->hold_value);
    for (uint64_t give_up = now + 10000000000ull; (int32_t)(__atomic_load_n(w, __ATOMIC_ACQUIRE) - v) < 0; now = now_ns())
      if (now > give_up) return CUDA_ERROR_LAUNCH_TIMEOUT;
  }
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
  int one = 1; /* a held stream's kernel: the next event recorded there is stamped at its end */
  atomic_compare_exchange_strong(&st->held, &one, 2);
  struct stub_event *ev = atomic_exchange(&st->pending, NULL); /* an event held with this kernel: stamped at its start */
  if (ev) {
    if (atomic_load(&ev->ts) < start) atomic_store(&ev->ts, start);
    atomic_store(&ev->on, NULL);
  }
  atomic_fetch_add(&g_kernels, 1);
  atomic_fetch_add(&g_busy_ns, dur);
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

/* the pre-4.0 launch API (still exported by CUDA 13 drivers): cuLaunch runs a 1 x 1 grid */
CUresult cuLaunch(CUfunction f) { return exec_on(NULL, 0, func_ns(f), "cuLaunch", 1); }
CUresult cuLaunchGrid(CUfunction f, int w, int h) { return exec_on(NULL, 0, func_ns(f), "cuLaunchGrid", (unsigned)(w * h)); }
CUresult cuLaunchGridAsync(CUfunction f, int w, int h, CUstream s) {
  return exec_on(s, 0, func_ns(f), "cuLaunchGridAsync", (unsigned)(w * h));
}
/* one device here: every entry runs on it */
CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *p, unsigned n, unsigned flags) {
  (void)flags;
  if (!p && n) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < n; i++)
    exec_on(p[i].hStream, 0, func_ns(p[i].function), "cuLaunchCooperativeKernelMultiDevice",
            p[i].gridDimX * p[i].gridDimY * p[i].gridDimZ);
  return CUDA_SUCCESS;
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
CUresult cuStreamDestroy_v2(CUstream s) {
  struct stub_stream *st = stream_of(s, 0);
  struct stub_event *ev = atomic_exchange(&st->pending, NULL);
  if (ev) atomic_store(&ev->on, NULL);
  slog("cuStreamDestroy_v2", "%p", (void *)s);
  if (st != &g_legacy) free(s);
  return CUDA_SUCCESS;
}
CUresult cuStreamQuery(CUstream s) { return atomic_load(&stream_of(s, 0)->busy_until) <= now_ns() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY; }
CUresult cuStreamQuery_ptsz(CUstream s) { return atomic_load(&stream_of(s, 1)->busy_until) <= now_ns() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY; }
CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) { (void)s; if (st) *st = CU_STREAM_CAPTURE_STATUS_NONE; return CUDA_SUCCESS; }
CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st) { return cuStreamIsCapturing(s, st); }

/* cuStreamWaitValue32 (GEQ, wrap-around order) on host memory: a value not written yet holds the
 * stream's next event with its next kernel (see the top of the file) */
static CUresult wait_value(CUstream s, int ptds, CUdeviceptr addr, cuuint32_t v, unsigned flags) {
  if (!addr || (addr & 3) || (flags & 0xf) != CU_STREAM_WAIT_VALUE_GEQ) return CUDA_ERROR_INVALID_VALUE;
  uint32_t cur = __atomic_load_n((uint32_t *)(uintptr_t)addr, __ATOMIC_ACQUIRE);
  struct stub_stream *st = stream_of(s, ptds);
  if ((int32_t)(cur - v) < 0) {
    atomic_store(&st->hold_word, (const uint32_t *)(uintptr_t)addr);
    atomic_store(&st->hold_value, v);
    atomic_store(&st->held, 1);
  }
  slog("cuStreamWaitValue32", "stream=%p value=%u held=%d", (void *)s, v, (int32_t)(cur - v) < 0);
  return CUDA_SUCCESS;
}
CUresult cuStreamWaitValue32(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) { return wait_value(s, 0, a, v, f); }
CUresult cuStreamWaitValue32_v2(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) { return wait_value(s, 0, a, v, f); }
CUresult cuStreamWaitValue32_ptsz(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) { return wait_value(s, 1, a, v, f); }
CUresult cuStreamWaitValue32_v2_ptsz(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) { return wait_value(s, 1, a, v, f); }
/* page-locked host memory: plain memory; its device address is the host address (UVA) */
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
  (void)flags;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  *p = calloc(1, n ? n : 1);
  slog("cuMemHostAlloc", "bytes=%zu flags=%u", n, flags);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags) {
  (void)flags;
  if (!d || !p) return CUDA_ERROR_INVALID_VALUE;
  *d = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}
CUresult cuMemFreeHost(void *p) { free(p); return CUDA_SUCCESS; }

/* events: zero-length operations on the device timeline (see the top of the file) */
static struct stub_event *event_of(CUevent e) {
  struct stub_event *ev = (struct stub_event *)e;
  return ev && ev->magic == STUB_MAGIC ? ev : NULL;
}
/* drops `ev` from the stream it waits on for a kernel, if any */
static void unpend(struct stub_event *ev) {
  struct stub_stream *on = atomic_exchange(&ev->on, NULL);
  struct stub_event *expected = ev;
  if (on) atomic_compare_exchange_strong(&on->pending, &expected, NULL);
}
CUresult cuEventCreate(CUevent *e, unsigned int flags) {
  struct stub_event *ev = calloc(1, sizeof *ev);
  if (!ev || !e) { free(ev); return CUDA_ERROR_INVALID_VALUE; }
  ev->magic = STUB_MAGIC;
  ev->flags = flags;
  *e = (CUevent)ev;
  slog("cuEventCreate", "%p flags=%u", (void *)ev, flags);
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent e) {
  struct stub_event *ev = event_of(e);
  if (!ev) return CUDA_ERROR_INVALID_HANDLE;
  unpend(ev);
  ev->magic = 0;
  free(ev);
  return CUDA_SUCCESS;
}
static CUresult event_record(CUevent e, CUstream s, int ptds, const char *call) {
  struct stub_event *ev = event_of(e);
  if (!ev) return CUDA_ERROR_INVALID_HANDLE;
  unpend(ev);
  struct stub_stream *st = stream_of(s, ptds);
  uint64_t now = now_ns(), t = now, sb = atomic_load(&st->busy_until), dev = atomic_load(&g_shm->busy_until);
  int held = atomic_load(&st->held);
  if (held == 2) { /* queued behind the held kernel: at its end; the waiter is released now */
    t = sb;
    atomic_store(&st->held, 0);
  } else if (sb > now) t = sb; /* after queued work: its end */
  else if (dev > now) t = dev; /* idle stream: the device's queue first, or the next kernel's start */
  atomic_store(&ev->ts, t);
  atomic_store(&ev->recorded, 1);
  if (held == 1) { /* behind the waiter: with the kernel that follows */
    atomic_store(&ev->on, st);
    atomic_store(&st->pending, ev);
  }
  slog(call, "event=%p stream=%p ts=%llu", (void *)ev, (void *)s, (unsigned long long)t);
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream s) { return event_record(e, s, 0, "cuEventRecord"); }
CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return event_record(e, s, 1, "cuEventRecord_ptsz"); }
CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned f) { (void)f; return event_record(e, s, 0, "cuEventRecordWithFlags"); }
CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned f) { (void)f; return event_record(e, s, 1, "cuEventRecordWithFlags_ptsz"); }
/* an event never recorded is complete, as the driver says */
CUresult cuEventQuery(CUevent e) {
  struct stub_event *ev = event_of(e);
  if (!ev) return CUDA_ERROR_INVALID_HANDLE;
  return !atomic_load(&ev->recorded) || now_ns() >= atomic_load(&ev->ts) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult cuEventSynchronize(CUevent e) {
  struct stub_event *ev = event_of(e);
  if (!ev) return CUDA_ERROR_INVALID_HANDLE;
  if (atomic_load(&ev->recorded)) sleep_until(atomic_load(&ev->ts));
  slog("cuEventSynchronize", "event=%p", (void *)ev);
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  struct stub_event *x = event_of(a), *y = event_of(b);
  if (!x || !y || !ms) return CUDA_ERROR_INVALID_HANDLE;
  if (!atomic_load(&x->recorded) || !atomic_load(&y->recorded)) return CUDA_ERROR_INVALID_HANDLE;
  if ((x->flags | y->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t t = now_ns(), ta = atomic_load(&x->ts), tb = atomic_load(&y->ts);
  if (t < ta || t < tb) return CUDA_ERROR_NOT_READY;
  *ms = (float)((double)((int64_t)(tb - ta)) / 1e6);
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) { return cuEventElapsedTime(ms, a, b); }

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
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s) {
  (void)p; (void)s;
  return mem_alloc(d, n, "cuMemAllocFromPoolAsync");
}
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s) {
  (void)p; (void)s;
  return mem_alloc(d, n, "cuMemAllocFromPoolAsync_ptsz");
}
/* virtual memory management: physical allocations are handles, mapped elsewhere */
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop, unsigned long long fl) {
  (void)prop; (void)fl;
  CUdeviceptr d;
  if (!h) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = mem_alloc(&d, n, "cuMemCreate");
  if (r == CUDA_SUCCESS) *h = (CUmemGenericAllocationHandle)d;
  return r;
}
CUresult cuMemRelease(CUmemGenericAllocationHandle h) { slog("cuMemRelease", "handle=0x%llx", (unsigned long long)h); return CUDA_SUCCESS; }
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
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: { /* an MPS client sees its share of the SMs */
      const char *pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), *pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
      int p = pct && pipe ? atoi(pct) : 100;
      *pi = p > 0 && p < 100 ? (108 * p + 99) / 100 : 108;
      break;
    }
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
CUresult cuFuncGetName(const char **name, CUfunction f) {
  const struct stub_func *fn = (const struct stub_func *)f;
  if (!name || !fn || fn->magic != STUB_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
  *name = fn->name;
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
  {"cuEventSynchronize", 2000, P(cuEventSynchronize), NULL},
  {"cuEventCreate", 2000, P(cuEventCreate), NULL},
  {"cuEventDestroy", 4000, P(cuEventDestroy_v2), NULL},
  {"cuEventRecord", 2000, P(cuEventRecord), P(cuEventRecord_ptsz)},
  {"cuEventRecordWithFlags", 11010, P(cuEventRecordWithFlags), P(cuEventRecordWithFlags_ptsz)},
  {"cuEventQuery", 2000, P(cuEventQuery), NULL},
  {"cuEventElapsedTime", 2000, P(cuEventElapsedTime), NULL},
  {"cuEventElapsedTime", 12080, P(cuEventElapsedTime_v2), NULL},
  {"cuStreamQuery", 2000, P(cuStreamQuery), P(cuStreamQuery_ptsz)},
  {"cuStreamIsCapturing", 10000, P(cuStreamIsCapturing), P(cuStreamIsCapturing_ptsz)},
  {"cuLaunch", 2000, P(cuLaunch), NULL},
  {"cuLaunchGrid", 2000, P(cuLaunchGrid), NULL},
  {"cuLaunchGridAsync", 2000, P(cuLaunchGridAsync), NULL},
  {"cuLaunchCooperativeKernelMultiDevice", 9000, P(cuLaunchCooperativeKernelMultiDevice), NULL},
  {"cuMemAllocFromPoolAsync", 11020, P(cuMemAllocFromPoolAsync), P(cuMemAllocFromPoolAsync_ptsz)},
  {"cuMemCreate", 10020, P(cuMemCreate), NULL},
  {"cuMemRelease", 10020, P(cuMemRelease), NULL},
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
