/* The device-time meter: what a launch costs, learnt from the GPU's own clock.
 *
 * A launch is charged at issue (the budget must hold a launch back before it
 * runs) the device time its kernel took before: a table keyed by the kernel
 * (CUfunction / CUkernel) and its grid size, or by the graph (CUgraphExec),
 * holds the learnt cost per thread block (per graph launch). Costs are learnt by bracketing a sample of
 * launches with two CUDA events on the launch's own stream (one recorded just
 * before, one just after) and reading cuEventElapsedTime once both completed.
 * The events are stamped by the device when it reaches them, and the sampled
 * launch is queued behind a gate (gate.c) that the thread opens only once the
 * end event is recorded, so the device processes the start event, the kernel
 * and the end event back to back: the interval is the kernel's occupancy of the
 * device. Host time between launches (a framework's Python, a request's
 * pre-processing) is not in it, nor the host's own launch call (without the
 * gate, an H100 stamped the start event of an idle stream before the kernel
 * was submitted), nor the time a kernel waits for another context of a
 * time-sliced GPU (the events of a context switched out are not processed). The
 * measurement of a sampled launch replaces its charge: the budget is trued up
 * by the difference when the sample is read.
 *
 * Sampled: every kernel's first TL_FIRST_SAMPLES launches, then one launch in
 * TL_SAMPLE_EVERY on average (per thread, at random so a periodic launch
 * sequence cannot alias). A sample costs two cuEventRecord calls at issue and
 * a cuEventQuery + cuEventElapsedTime when read; samples are read by the
 * launching thread at its next sample and at its synchronize calls, never on
 * the other launches. Launches into a stream being captured into a graph are
 * never sampled (an event recorded there would become a node of the user's
 * graph). A kernel never sampled yet is charged the process-wide average cost
 * of a sampled launch (or graph launch), whatever its grid size.
 *
 * Costs per block are kept per kernel and grid size because one kernel's
 * blocks in one launch shape cost about the same from launch to launch while
 * different kernels' differ by orders of magnitude. The cost is the smallest
 * of the entry's last 8 samples (robust_cost): a sample can only be too long
 * (the kernel waited behind the process's other streams, another context's
 * kernels, or the launch), so the low side is the kernel's own time. The
 * price: a kernel whose cost per block varies with its arguments at one grid
 * size is charged toward its cheaper launches (its sampled launches are
 * charged what they measured, up to 1.5 x the cost). Several streams of
 * one process whose kernels run concurrently are charged the sum of their
 * kernels' times, more than the device time they occupied together: the
 * meter errs toward charging too much there, never too little.
 *
 * Concurrency: the table is lock-free (open addressing, CAS on an empty key);
 * costs are plain atomics; sample state is thread-local.
 * With TL_NS_PER_BLOCK set nothing is sampled: every block costs that.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "limiter.h"
#include "gate.h"
#include "meter.h"

#define TL_KC_SLOTS 4096u /* kernels and graphs with a cost of their own */
#define TL_KC_PROBE 32u
#define TL_FIRST_SAMPLES 3u
#define TL_PENDING 64u    /* samples in flight per thread */

#define TL_RECENT 8u       /* samples per kernel the estimate is taken from */

struct tl_kcost {
  _Atomic uintptr_t key;
  _Atomic uint64_t ns_per_unit; /* 0: not learnt yet */
  _Atomic uint32_t samples;
  _Atomic int seen; /* a sampled launch of the entry has been seen (its first is never gated) */
  _Atomic uint64_t recent[TL_RECENT]; /* the last samples, ns per unit */
  uintptr_t fn;   /* the kernel or graph, and the units of a launch: for TL_COSTS_FILE */
  uint64_t units;
};

static struct tl_kcost g_kc[TL_KC_SLOTS];
static struct tl_event_api g_ev;
static _Atomic uint64_t g_avg_block = 1000, g_avg_graph = 1000000; /* averages over the samples, ns */
static _Atomic uint64_t g_avg_launch = 10000; /* the guess for a kernel launch not learnt yet, ns */
static _Atomic uint64_t g_samples, g_sample_drops, g_kernels;
static unsigned g_every = 64;
static uint64_t g_fixed; /* TL_NS_PER_BLOCK */

struct sample {
  CUevent a, b;
  struct tl_kcost *k;
  uint64_t units, charged;
  int graph;
};

static char (*g_names)[128]; /* TL_COSTS_FILE: each entry's kernel name, taken when the entry is made */
static _Atomic int g_threads; /* threads that launched */

static __thread struct {
  CUstream first_stream; /* the stream of the thread's first launch */
  int registered, multi, deferred; /* multi: it has launched into another one since */
  struct sample pend[TL_PENDING];
  unsigned head, n;
  CUevent pool[2 * TL_PENDING];
  unsigned npool, created;
  CUcontext ctx;
  uint32_t rng, countdown;
} ts;

void tl_meter_init(const struct tl_event_api *api, uint64_t fixed_ns_per_block, unsigned every, int names) {
  if (api) g_ev = *api;
  if (names) g_names = calloc(TL_KC_SLOTS, sizeof *g_names);
  g_fixed = fixed_ns_per_block;
  g_every = every;
  if (g_fixed) atomic_store(&g_avg_block, g_fixed);
}

static int can_sample(void) {
  return !g_fixed && g_ev.create && g_ev.record && g_ev.query && g_ev.elapsed && g_ev.ctx_current;
}


static void name_entry(uint32_t i, uintptr_t fn, int graph) {
  const char *s = NULL;
  if (graph) s = "(graph)";
  else if (!(g_ev.func_name && g_ev.func_name(&s, (CUfunction)fn) == CUDA_SUCCESS && s))
    if (!(g_ev.kernel_name && g_ev.kernel_name(&s, (CUkernel)fn) == CUDA_SUCCESS && s)) s = "?";
  snprintf(g_names[i], sizeof g_names[i], "%s", s);
}

static struct tl_kcost *lookup(uintptr_t key, uintptr_t fn, uint64_t units, int graph) {
  if (!key) return NULL;
  uint32_t i = (uint32_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 40) & (TL_KC_SLOTS - 1);
  for (uint32_t n = 0; n < TL_KC_PROBE; n++, i = (i + 1) & (TL_KC_SLOTS - 1)) {
    uintptr_t k = atomic_load_explicit(&g_kc[i].key, memory_order_acquire);
    if (k == key) return &g_kc[i];
    if (k == 0) {
      uintptr_t expected = 0;
      if (atomic_compare_exchange_strong(&g_kc[i].key, &expected, key)) {
        atomic_fetch_add_explicit(&g_kernels, 1, memory_order_relaxed);
        g_kc[i].fn = fn;
        g_kc[i].units = units;
        if (g_names) name_entry(i, fn, graph);
        return &g_kc[i];
      }
      if (expected == key) return &g_kc[i];
    }
  }
  return NULL; /* table full around this slot: the average applies */
}

static uint32_t next_rand(void) {
  if (!ts.rng) ts.rng = (uint32_t)syscall(SYS_gettid) * 2654435761u | 1u;
  ts.rng ^= ts.rng << 13;
  ts.rng ^= ts.rng >> 17;
  ts.rng ^= ts.rng << 5;
  return ts.rng;
}

/* A kernel's cost from its recent samples: the smallest of the last 8. Waiting only ever adds to a
 * sample: for kernels of other streams of the process queued before it, for another context's
 * kernels on a time-sliced GPU (when both keep their queues full, most samples wait), for the
 * launch to arrive at an idle device. So the low side is where the kernel's own time is, and one
 * clean sample in 8 is enough. Keyed by kernel and grid size, a table entry's launches cost about
 * the same, so the minimum is not far below their mean. */
static uint64_t robust_cost(struct tl_kcost *k, uint32_t n) {
  uint64_t v[TL_RECENT];
  uint32_t m = 0, slots = n < TL_RECENT ? n : TL_RECENT;
  for (uint32_t i = 0; i < slots; i++) {
    uint64_t x = atomic_load_explicit(&k->recent[i], memory_order_relaxed), j = m;
    if (!x) continue; /* a slot another thread has claimed but not written yet */
    for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
    v[j] = x;
    m++;
  }
  return m ? v[0] : 0;
}

static void learn(_Atomic uint64_t *est, uint64_t sample, int first, unsigned shift) {
  uint64_t old = atomic_load_explicit(est, memory_order_relaxed);
  uint64_t nv = first || !old ? sample
                : sample > old ? old + ((sample - old) >> shift) : old - ((old - sample) >> shift);
  atomic_store_explicit(est, nv ? nv : 1, memory_order_relaxed);
}

static void release_events(struct sample *s) {
  ts.pool[ts.npool++] = s->a;
  ts.pool[ts.npool++] = s->b;
}

/* Reads the completed samples, oldest first; stops at the first still running. */
void tl_meter_harvest(void) {
  while (ts.n) {
    struct sample *s = &ts.pend[ts.head];
    CUresult q = g_ev.query(s->b);
    if (q == CUDA_ERROR_NOT_READY) return;
    float ms = 0;
    if (q == CUDA_SUCCESS && g_ev.elapsed(&ms, s->a, s->b) == CUDA_SUCCESS && ms >= 0) {
      uint64_t ns = (uint64_t)((double)ms * 1e6 + 0.5), per = ns / (s->units ? s->units : 1);
      uint64_t est = per ? per : 1;
      if (s->k) {
        uint32_t n = atomic_fetch_add_explicit(&s->k->samples, 1, memory_order_relaxed);
        atomic_store_explicit(&s->k->recent[n % TL_RECENT], est, memory_order_relaxed);
        uint64_t c = robust_cost(s->k, n + 1);
        if (c) atomic_store_explicit(&s->k->ns_per_unit, est = c, memory_order_relaxed);
      }
      uint64_t before = atomic_fetch_add_explicit(&g_samples, 1, memory_order_relaxed);
      learn(s->graph ? &g_avg_graph : &g_avg_block, est, before == 0, 3); /* the first replaces the guess */
      if (!s->graph) learn(&g_avg_launch, est * s->units, before == 0, 3);
      /* the sampled launch is charged what it measured, up to 1.5 x its kernel's cost: beyond that
       * it mostly waited (for another context's kernels, other streams) */
      uint64_t cap = est * s->units + (est * s->units) / 2;
      tl_budget_true_up(s->charged, ns > cap ? cap : ns);
    } else {
      atomic_fetch_add_explicit(&g_sample_drops, 1, memory_order_relaxed);
    }
    release_events(s);
    ts.head = (ts.head + 1) % TL_PENDING;
    ts.n--;
  }
}

/* Events of the calling thread's current context; 0 when none can be had. */
static int events_ready(void) {
  CUcontext c = NULL;
  if (g_ev.ctx_current(&c) != CUDA_SUCCESS || !c) return 0;
  if (ts.created && c != ts.ctx) {
    if (ts.n) return 0; /* samples of the other context still to read */
    for (unsigned i = 0; i < ts.npool; i++) if (g_ev.destroy) g_ev.destroy(ts.pool[i]);
    ts.npool = ts.created = 0;
  }
  ts.ctx = c;
  while (!ts.created && ts.npool < 2 * TL_PENDING) {
    if (g_ev.create(&ts.pool[ts.npool], CU_EVENT_DEFAULT) != CUDA_SUCCESS) break;
    ts.npool++;
  }
  ts.created = 1;
  return ts.npool >= 2;
}

/* Whether a sample on `s` now would be clean: nothing else of this process can run between its
 * start event and its kernel. With one thread on one stream that always holds (the stream's own
 * earlier work ends where the start event is stamped); with several streams it holds when the
 * stream is idle. After TL_MAX_DEFERRED refusals a sample is taken anyway (the robust cost
 * absorbs an unclean one). */
#define TL_MAX_DEFERRED 16
static int clean_now(CUstream s) {
  if (atomic_load_explicit(&g_threads, memory_order_relaxed) <= 1 && !ts.multi) return 1;
  if (!g_ev.stream_query || g_ev.stream_query(s) == CUDA_SUCCESS || ++ts.deferred > TL_MAX_DEFERRED) {
    ts.deferred = 0;
    return 1;
  }
  return 0;
}

static int capturing(CUstream s) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!g_ev.is_capturing) return 0;
  return g_ev.is_capturing(s, &st) != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE;
}

void tl_meter_begin(struct tl_launch *l, uintptr_t key, uint64_t units, int graph, CUstream stream, int ptsz) {
  /* one entry per kernel and grid size: a kernel's blocks cost alike within one shape of launch */
  struct tl_kcost *k = g_fixed ? NULL : lookup(key ? key ^ (uintptr_t)(units * 0x9E3779B97F4A7C15ull) : 0, key, units, graph);
  uint64_t per = g_fixed ? (graph ? atomic_load_explicit(&g_avg_graph, memory_order_relaxed) : g_fixed) : 0;
  if (!per && k) per = atomic_load_explicit(&k->ns_per_unit, memory_order_relaxed);
  *l = (struct tl_launch){.k = k, .units = units ? units : 1, .graph = graph, .sample = -1};
  /* not learnt yet: the average launch (not the average block times this grid: an H100 running
   * cudnn's autotuning was charged seconds for large-grid kernels it never got to sample) */
  l->charged = per ? l->units * per : atomic_load_explicit(graph ? &g_avg_graph : &g_avg_launch, memory_order_relaxed);
  l->stream = ptsz && stream == NULL ? CU_STREAM_PER_THREAD : stream;
  tl_budget_charge(l->charged, graph);
  if (!can_sample()) return;
  if (__builtin_expect(!ts.registered, 0)) { /* which threads and streams launch: clean_now */
    ts.registered = 1;
    ts.first_stream = l->stream;
    atomic_fetch_add_explicit(&g_threads, 1, memory_order_relaxed);
  } else if (l->stream != ts.first_stream) ts.multi = 1;
  int first = k && atomic_load_explicit(&k->samples, memory_order_relaxed) < TL_FIRST_SAMPLES, want = first;
  if (!want && g_every) {
    if (ts.countdown == 0) ts.countdown = 1 + next_rand() % (2 * g_every);
    want = --ts.countdown == 0;
  }
  if (!want) return;
  if (!clean_now(l->stream)) {
    if (!first) ts.countdown = 4; /* try again a few launches on */
    return;
  }
  tl_meter_harvest();
  if (ts.n >= TL_PENDING || !events_ready() || capturing(l->stream)) return;
  l->sample = (int)((ts.head + ts.n) % TL_PENDING);
  struct sample *s = &ts.pend[l->sample];
  *s = (struct sample){.a = ts.pool[--ts.npool], .b = ts.pool[--ts.npool], .k = k, .units = l->units, .charged = l->charged, .graph = graph};
  /* a kernel's first launch may load its module and synchronize the context: never behind a gate */
  if (k && atomic_exchange_explicit(&k->seen, 1, memory_order_relaxed)) l->gate = tl_gate_close(l->stream);
  if (g_ev.record(s->a, l->stream) != CUDA_SUCCESS) {
    release_events(s);
    tl_gate_open(l->gate);
    l->gate = 0;
    l->sample = -1;
  }
}

void tl_meter_end(struct tl_launch *l, CUresult r) {
  if (r != CUDA_SUCCESS) tl_budget_true_up(l->charged, 0); /* nothing was launched */
  if (l->sample < 0) return;
  struct sample *s = &ts.pend[l->sample];
  int ok = r == CUDA_SUCCESS && g_ev.record(s->b, l->stream) == CUDA_SUCCESS;
  tl_gate_open(l->gate); /* after the end event: the device runs the three back to back */
  if (!ok) {
    release_events(s);
    return;
  }
  ts.n++;
}

void tl_meter_after_fork(void) { memset(&ts, 0, sizeof ts); /* the parent's events are not the child's */ }

/* TL_COSTS_FILE: one line per (kernel, grid size) entry: cost of a launch (ns), blocks, samples, name */
void tl_meter_dump(FILE *f) {
  for (uint32_t i = 0; i < TL_KC_SLOTS; i++) {
    struct tl_kcost *k = &g_kc[i];
    if (!atomic_load(&k->key)) continue;
    fprintf(f, "%llu\t%llu\t%u\t%s\n", (unsigned long long)(atomic_load(&k->ns_per_unit) * k->units),
            (unsigned long long)k->units, atomic_load(&k->samples), g_names ? g_names[i] : "?");
  }
}

void tl_meter_stats(struct tl_stats *st) {
  st->ns_per_block = atomic_load(&g_avg_block);
  st->samples = atomic_load(&g_samples);
  st->sample_drops = atomic_load(&g_sample_drops);
  st->kernels = atomic_load(&g_kernels);
}
