/* Configuration (read once), logging and the counters file. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "gate.h"
#include "limiter.h"
#include "meter.h"
#include "tl_clock.h"

TL_CLOCK_DEFINE;
struct tl_config tl_cfg;
static FILE *g_logf;
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;

static int parse_u64(const char *s, uint64_t *out, int allow_suffix) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return -1;
  if (allow_suffix && *end) {
    switch (*end | 0x20) {
      case 'k': v <<= 10; break;
      case 'm': v <<= 20; break;
      case 'g': v <<= 30; break;
      default: return -1;
    }
    end++;
  }
  if (*end) return -1;
  *out = v;
  return 0;
}

/* Whether this process will be an MPS client: the driver connects to the control daemon's socket in
 * CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) at initialisation and runs without MPS when it
 * is not there; only then does CUDA_MPS_ACTIVE_THREAD_PERCENTAGE limit the process's SMs. */
static int mps_daemon_running(void) {
  const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/control", dir && *dir ? dir : "/tmp/nvidia-mps");
  return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Defaults, then the environment, then validation; errors name the variable. */
int tl_parse_config(struct tl_config *cfg, char *err, size_t errlen) {
  const char *v;
  uint64_t n;
  *cfg = (struct tl_config){.timeout_ns = 200000000ull, .fail = TL_FAIL_OPEN};
  if ((v = getenv("TL_TOKEND_SOCKET")) || (v = getenv("MLFAAS_TOKEND_SOCKET"))) {
    if (strlen(v) >= sizeof cfg->socket_path) goto bad_socket;
    snprintf(cfg->socket_path, sizeof cfg->socket_path, "%s", v);
  }
  if ((v = getenv("TL_DEVICE")) && *v) {
    if (parse_u64(v, &n, 0) || n > 0xfffe) { snprintf(err, errlen, "TL_DEVICE=%s: not a GPU index", v); goto err; }
    cfg->device = (uint32_t)n;
  }
  if ((v = getenv("TL_SLO")) && *v) cfg->slo = strcmp(v, "0") != 0;
  if ((v = getenv("TL_TIMEOUT_MS")) && *v) {
    if (parse_u64(v, &n, 0) || n == 0) { snprintf(err, errlen, "TL_TIMEOUT_MS=%s: want a positive integer", v); goto err; }
    cfg->timeout_ns = n * 1000000ull;
  }
  if ((v = getenv("TL_FAIL")) && *v) {
    if (strcmp(v, "open") == 0) cfg->fail = TL_FAIL_OPEN;
    else if (strcmp(v, "closed") == 0) cfg->fail = TL_FAIL_CLOSED;
    else { snprintf(err, errlen, "TL_FAIL=%s: want open or closed", v); goto err; }
  }
  if ((v = getenv("TL_MEM_LIMIT")) && *v) {
    if (parse_u64(v, &cfg->mem_limit, 1)) { snprintf(err, errlen, "TL_MEM_LIMIT=%s: want bytes[k|m|g]", v); goto err; }
  }
  if ((v = getenv("TL_NS_PER_BLOCK")) && *v) {
    if (parse_u64(v, &cfg->ns_per_block, 0)) { snprintf(err, errlen, "TL_NS_PER_BLOCK=%s: want ns", v); goto err; }
  }
  cfg->sm_share_ppm = 1000000;
  if ((v = getenv("TL_SM_SHARE")) && *v) {
    char *end = NULL;
    double f = strtod(v, &end);
    if (end == v || *end || !(f > 0 && f <= 1)) { snprintf(err, errlen, "TL_SM_SHARE=%s: want a fraction in (0, 1]", v); goto err; }
    cfg->sm_share_ppm = (uint32_t)(f * 1e6 + 0.5);
  } else if ((v = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")) && *v && mps_daemon_running()) {
    char *end = NULL;
    double pct = strtod(v, &end);
    if (end != v && !*end && pct > 0 && pct <= 100) cfg->sm_share_ppm = (uint32_t)(pct * 1e4 + 0.5);
  }
  cfg->sample_every = 64;
  if ((v = getenv("TL_SAMPLE_EVERY")) && *v) {
    if (parse_u64(v, &n, 0) || n > 1000000) { snprintf(err, errlen, "TL_SAMPLE_EVERY=%s: want 0..1000000", v); goto err; }
    cfg->sample_every = (unsigned)n;
  }
  cfg->gate = cfg->socket_path[0] && !((v = getenv("CUDA_LAUNCH_BLOCKING")) && strcmp(v, "1") == 0);
  if ((v = getenv("TL_GATE")) && *v) {
    if (strcmp(v, "0") && strcmp(v, "1")) { snprintf(err, errlen, "TL_GATE=%s: want 0 or 1", v); goto err; }
    if (strcmp(v, "0") == 0) cfg->gate = 0;
  }
  if ((v = getenv("TL_LOG"))) snprintf(cfg->log_path, sizeof cfg->log_path, "%s", v);
  if ((v = getenv("TL_STATS_FILE"))) snprintf(cfg->stats_path, sizeof cfg->stats_path, "%s", v);
  if ((v = getenv("TL_COSTS_FILE"))) snprintf(cfg->costs_path, sizeof cfg->costs_path, "%s", v);
  return 0;
bad_socket:
  snprintf(err, errlen, "TL_TOKEND_SOCKET: path longer than %zu bytes", sizeof cfg->socket_path - 1);
err:
  return -1;
}

void tl_log(const char *fmt, ...) {
  if (!g_logf) return;
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&g_log_mu);
  fprintf(g_logf, "limiter[%d] ", (int)getpid());
  vfprintf(g_logf, fmt, ap);
  fputc('\n', g_logf);
  fflush(g_logf);
  pthread_mutex_unlock(&g_log_mu);
  va_end(ap);
}

TL_API void tl_get_stats(struct tl_stats *st) {
  *st = (struct tl_stats){0};
  tl_budget_stats(st);
  tl_meter_stats(st);
  tl_mem_stats(st);
  tl_hooks_stats(st);
  tl_gate_stats(st);
}

static void write_stats(void) {
  FILE *cf = tl_cfg.costs_path[0] ? fopen(tl_cfg.costs_path, "w") : NULL;
  if (cf) {
    tl_meter_dump(cf);
    fclose(cf);
  }
  if (!tl_cfg.stats_path[0]) return;
  char path[300];
  const char *p = strstr(tl_cfg.stats_path, "%p");
  if (p) snprintf(path, sizeof path, "%.*s%d%s", (int)(p - tl_cfg.stats_path), tl_cfg.stats_path, (int)getpid(), p + 2);
  else snprintf(path, sizeof path, "%s", tl_cfg.stats_path);
  FILE *f = fopen(path, "w");
  if (!f) return;
  struct tl_stats s;
  tl_get_stats(&s);
#define W(k) fprintf(f, #k "=%llu\n", (unsigned long long)s.k)
  W(launches); W(graph_launches); W(throttled); W(throttled_ns); W(swapped); W(unswapped);
  W(dlsym_hooked); W(connects); W(disconnects); W(failopen); W(grants); W(revokes);
  W(granted_ns); W(charged_ns); W(mem_used); W(mem_denied); W(ns_per_block); W(cost_ns);
  W(samples); W(sample_drops); W(kernels); W(gated); W(gate_timeouts); W(gate_off);
#undef W
  fclose(f);
}

void tl_init(void) {
  char err[160];
  if (tl_parse_config(&tl_cfg, err, sizeof err) != 0) {
    fprintf(stderr, "limiter: %s; limiter disabled\n", err);
    tl_cfg = (struct tl_config){.timeout_ns = 200000000ull, .sample_every = 64, .sm_share_ppm = 1000000};
  }
  if (strcmp(tl_cfg.log_path, "stderr") == 0) g_logf = stderr;
  else if (tl_cfg.log_path[0]) g_logf = fopen(tl_cfg.log_path, "ae");
  atexit(write_stats);
  pthread_atfork(NULL, NULL, tl_budget_after_fork);
  tl_log("init socket=%s device=%u slo=%d timeout_ms=%llu fail=%s mem_limit=%llu sm_share=%.4f", tl_cfg.socket_path,
         tl_cfg.device, tl_cfg.slo, (unsigned long long)(tl_cfg.timeout_ns / 1000000),
         tl_cfg.fail == TL_FAIL_OPEN ? "open" : "closed", (unsigned long long)tl_cfg.mem_limit, tl_cfg.sm_share_ppm / 1e6);
}
