/* liblimiter.so: an LD_PRELOAD library that meters CUDA kernel launches
 * against GPU-time tokens issued by tokend, and caps device memory.
 *
 * What it catches (see hooks.def for the full list):
 *  - dlsym(h, "cuGetProcAddress[_v2]") and dlsym of any hooked name: the
 *    caller gets the limiter's function; the real one is kept.
 *  - cuGetProcAddress[_v2]: the real one runs with the caller's version and
 *    flags; the pointer it returns is swapped only when it is identical to
 *    the real address of a hooked function (so the driver, not the limiter,
 *    decides which _vN / _ptsz variant a version and flag pair means).
 *  - direct calls from programs linked with -lcuda (the exports themselves).
 *
 * Environment (read once, at the first hooked call):
 *  TL_TOKEND_SOCKET (or MLFAAS_TOKEND_SOCKET)  unix socket of tokend; unset:
 *                     no time limit (memory limit still applies)
 *  TL_DEVICE          GPU index reported to tokend (default 0)
 *  TL_SLO             1: SLO-sensitive client (Dilu Algorithm 2)
 *  TL_TIMEOUT_MS      tokend silent this long -> fail open (default 200)
 *  TL_FAIL            "open" (default) or "closed": keep waiting for tokend
 *  TL_MEM_LIMIT       device memory cap, bytes with optional k/m/g suffix
 *  TL_NS_PER_BLOCK    fixed launch cost per thread block in ns; unset: each
 *                     kernel's cost is learnt from CUDA events (meter.c)
 *  TL_SM_SHARE        the process's SM share under MPS, (0, 1]; default
 *                     CUDA_MPS_ACTIVE_THREAD_PERCENTAGE / 100 when the MPS
 *                     control daemon's socket is in CUDA_MPS_PIPE_DIRECTORY
 *                     (default /tmp/nvidia-mps: the driver then makes the
 *                     process an MPS client), else 1. Its device time is charged
 *                     times this share and tokend scales its quota by it (HELLO)
 *  TL_SAMPLE_EVERY    after a kernel's first launches, one launch in this many
 *                     (on average) is timed with events (default 64; 0: none)
 *  TL_GATE            0: time samples without the gate (gate.c; default on
 *                     when tokend is set and CUDA_LAUNCH_BLOCKING is not 1)
 *  TL_LOG             "stderr" or a file path for swap/connect events
 *  TL_STATS_FILE      file that receives the counters (key=value) at exit
 *  TL_COSTS_FILE      file that receives the meter's table at exit (diagnostics):
 *                     per (kernel, grid size) its launch cost, blocks, samples, name
 */
#ifndef TL_LIMITER_H
#define TL_LIMITER_H

#include <stdint.h>

#define TL_API __attribute__((visibility("default")))

enum tl_fail_mode { TL_FAIL_OPEN = 0, TL_FAIL_CLOSED = 1 };

struct tl_config {
  char socket_path[108];
  uint32_t device;
  int slo;
  uint64_t timeout_ns;
  enum tl_fail_mode fail;
  uint64_t mem_limit;      /* bytes, 0 = none */
  uint64_t ns_per_block;   /* 0 = learn */
  unsigned sample_every;
  int gate;                /* queue sampled launches behind a gate (gate.c) */
  uint32_t sm_share_ppm;   /* 1000000 = the whole device */
  char log_path[256];
  char stats_path[256];
  char costs_path[256];    /* TL_COSTS_FILE */
};

/* Counters; every field is monotonic except the gauges marked so. */
struct tl_stats {
  uint64_t launches, graph_launches, throttled, throttled_ns;
  uint64_t swapped, unswapped, dlsym_hooked;
  uint64_t connects, disconnects, failopen, grants, revokes;
  uint64_t granted_ns, charged_ns;
  uint64_t mem_used, mem_denied; /* mem_used: gauge, bytes */
  uint64_t ns_per_block;         /* gauge: average cost of a block over the samples (the guess for a new kernel) */
  uint64_t cost_ns;              /* device time charged by all launches, sampled ones at their measured time */
  uint64_t samples, sample_drops, kernels; /* launches timed with events; samples lost; (kernel, grid size) entries with a cost */
  uint64_t gated, gate_timeouts, gate_off; /* samples behind a gate; gates the watchdog opened; gauge: 1 gate unusable */
};

/* internal API between hooks.c, budget.c and memlimit.c (hidden symbols) */
extern struct tl_config tl_cfg;
void tl_init(void);
void tl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tl_parse_config(struct tl_config *cfg, char *err, size_t errlen);

void tl_budget_start(void);              /* start the tokend client once per process */
void tl_budget_charge(uint64_t cost_ns, int graph); /* hot path; may block */
void tl_budget_true_up(uint64_t charged_ns, uint64_t actual_ns); /* a launch's cost, once measured */
void tl_budget_after_fork(void);
void tl_budget_stats(struct tl_stats *st);
void tl_meter_stats(struct tl_stats *st);

int tl_mem_reserve(uint64_t bytes);      /* 0 ok, -1 over the limit */
void tl_mem_unreserve(uint64_t bytes);
void tl_mem_record(uint64_t ptr, uint64_t bytes);
void tl_mem_release(uint64_t ptr);
uint64_t tl_mem_used(void);
void tl_mem_stats(struct tl_stats *st);

void tl_hooks_stats(struct tl_stats *st);

/* exported for tests and tools: a snapshot of the counters */
TL_API void tl_get_stats(struct tl_stats *st);

#endif
