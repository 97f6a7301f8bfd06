/* The sample gate: a sampled launch's start event and kernel reach the device together.
 *
 * Measured on an H100: an event recorded on an idle stream is stamped as soon
 * as the device reads it, before the kernel behind it has even been submitted,
 * so the interval between the two events included the host's launch call
 * (4 us on that machine). An empty kernel was charged 5 us instead of about 1,
 * and a PyTorch loop twice its device time. So a sampled launch is queued
 * behind a gate: cuStreamWaitValue32 on a word of pinned host memory, then the
 * start event, the kernel and the end event; the launching thread opens the
 * gate (stores the awaited value) once the end event is recorded. The device
 * then processes the start event, the kernel and the end event back to back:
 * the interval is the kernel's own time, whether the stream was idle or busy
 * and whether or not another context held a time-sliced device meanwhile.
 *
 * A launch call can itself wait for the device: lazy module loading may
 * synchronize the context at a kernel's first launch, and CUDA_LAUNCH_BLOCKING
 * makes every launch wait. Behind a closed gate that would never end, so the
 * tokend client thread opens any gate closed for longer than TL_GATE_MAX_NS
 * (tl_gate_watchdog, called at least every 2 ms), and no gate is used with
 * CUDA_LAUNCH_BLOCKING set, without the client thread, or with TL_GATE=0. A
 * gate the watchdog had to open only spoils its sample (too long: the robust
 * cost discards it). The first failure of the driver's stream memory operations
 * turns the gate off for the process (the samples are then taken ungated).
 *
 * One word per launching thread, in one pinned page (TL_GATE_SLOTS threads;
 * later threads sample ungated). Values rise per word; the device waits for
 * "word >= value" in wrap-around order, and the watchdog only ever raises a word.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "gate.h"
#include "limiter.h"
#include "tl_clock.h"

#define TL_GATE_SLOTS 512u
#define TL_GATE_MAX_NS 2000000ull

enum { GATE_UNTRIED, GATE_READY, GATE_OFF };

static struct tl_gate_api g_api;
static _Atomic int g_state = GATE_OFF;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile uint32_t *g_words; /* pinned host memory: TL_GATE_SLOTS words */
static CUdeviceptr g_dwords;      /* the same words as the device addresses them */
static _Atomic uint32_t g_next_slot;
static _Atomic uint32_t g_pending[TL_GATE_SLOTS]; /* awaited value of a closed gate, 0: open */
static _Atomic uint64_t g_since[TL_GATE_SLOTS];
static _Atomic uint64_t g_gated, g_timeouts;

static __thread struct { int slot; uint32_t seq; } tg = {-1, 0};

void tl_gate_init(const struct tl_gate_api *api, int enabled) {
  if (api) g_api = *api;
  int usable = enabled && g_api.wait_value && g_api.host_alloc && g_api.host_dptr;
  atomic_store(&g_state, usable ? GATE_UNTRIED : GATE_OFF);
}

static void turn_off(const char *what, CUresult r) {
  if (atomic_exchange(&g_state, GATE_OFF) != GATE_OFF)
    tl_log("sample gate off: %s failed (CUresult %d); samples are taken ungated", what, (int)r);
}

/* The pinned page, once per process, in the first context that samples (portable to the others). */
static int words_ready(void) {
  int st = atomic_load_explicit(&g_state, memory_order_acquire);
  if (st != GATE_UNTRIED) return st == GATE_READY;
  pthread_mutex_lock(&g_mu);
  if (atomic_load(&g_state) == GATE_UNTRIED) {
    void *p = NULL;
    CUdeviceptr d = 0;
    CUresult r = g_api.host_alloc(&p, TL_GATE_SLOTS * sizeof(uint32_t), CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    if (r == CUDA_SUCCESS && (r = g_api.host_dptr(&d, p, 0)) == CUDA_SUCCESS) {
      g_words = p;
      for (unsigned i = 0; i < TL_GATE_SLOTS; i++) g_words[i] = 0;
      g_dwords = d;
      atomic_store_explicit(&g_state, GATE_READY, memory_order_release);
    } else {
      turn_off("pinning the gate page", r);
    }
  }
  pthread_mutex_unlock(&g_mu);
  return atomic_load(&g_state) == GATE_READY;
}

uint32_t tl_gate_close(CUstream s) {
  if (atomic_load_explicit(&g_state, memory_order_relaxed) == GATE_OFF || !words_ready()) return 0;
  if (tg.slot < 0) {
    uint32_t i = atomic_fetch_add(&g_next_slot, 1);
    if (i >= TL_GATE_SLOTS) return 0;
    tg.slot = (int)i;
  }
  if (++tg.seq == 0) tg.seq = 1;
  atomic_store(&g_since[tg.slot], tl_clock_now());
  atomic_store(&g_pending[tg.slot], tg.seq);
  CUresult r = g_api.wait_value(s, g_dwords + (CUdeviceptr)tg.slot * sizeof(uint32_t), tg.seq, CU_STREAM_WAIT_VALUE_GEQ);
  if (r != CUDA_SUCCESS) {
    atomic_store(&g_pending[tg.slot], 0);
    turn_off("cuStreamWaitValue32", r);
    return 0;
  }
  atomic_fetch_add_explicit(&g_gated, 1, memory_order_relaxed);
  return tg.seq;
}

/* Raises word i to v unless it is already at or past v (wrap-around order). */
static void raise_word(uint32_t i, uint32_t v) {
  uint32_t cur = __atomic_load_n(&g_words[i], __ATOMIC_ACQUIRE);
  while ((int32_t)(v - cur) > 0 && !__atomic_compare_exchange_n(&g_words[i], &cur, v, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {}
}

void tl_gate_open(uint32_t seq) {
  if (!seq || tg.slot < 0) return;
  raise_word((uint32_t)tg.slot, seq);
  uint32_t expected = seq;
  atomic_compare_exchange_strong(&g_pending[tg.slot], &expected, 0);
}

void tl_gate_watchdog(uint64_t now) {
  if (atomic_load_explicit(&g_state, memory_order_relaxed) != GATE_READY) return;
  uint32_t n = atomic_load(&g_next_slot);
  if (n > TL_GATE_SLOTS) n = TL_GATE_SLOTS;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t p = atomic_load(&g_pending[i]);
    if (!p || now - atomic_load(&g_since[i]) < TL_GATE_MAX_NS) continue;
    raise_word(i, p);
    if (atomic_compare_exchange_strong(&g_pending[i], &p, 0)) atomic_fetch_add(&g_timeouts, 1);
  }
}

void tl_gate_after_fork(void) {
  /* the child cannot use the parent's CUDA state; its threads start without a slot */
  tg.slot = -1;
  tg.seq = 0;
}

void tl_gate_stats(struct tl_stats *st) {
  st->gated = atomic_load(&g_gated);
  st->gate_timeouts = atomic_load(&g_timeouts);
  st->gate_off = atomic_load(&g_state) == GATE_OFF;
}
