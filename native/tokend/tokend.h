/* tokend: the per-node token daemon.
 *
 * Per device (GPU 0..n-1 and the CPU device) a window of W ns (default 20 ms);
 * each window tokend plans a grant (ns of device time) for every active client
 * from its <request, limit> quota and its reported use, then pushes GRANTs.
 *  - request: guaranteed fraction of the device per window;
 *  - limit: the most it may get; capacity nobody requested is handed out
 *    work-conservingly, largest deficit first, up to each limit;
 *  - SLO-sensitive clients drive Dilu's Algorithm 2 (EMERGENCY / RECOVERY /
 *    CONTENTION from changes of their kernel launch cycle).
 * Wire protocol: ../include/tokend_proto.h. Control: JSON lines, see control.c.
 */
#ifndef TOKEND_H
#define TOKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tokend_proto.h"

#define TOKEND_RW 8          /* windows in a client's launch-rate window (Dilu RW) */
#define TOKEND_MAX_CLIENTS 256
#define TOKEND_MAX_RULES 256
#define TOKEND_MAX_GPUS 16
#define TOKEND_RCKM_HIST 20   /* Dilu RCKM: KLCs remembered per client (PERIOD_HISTORY_SIZE) */

enum tokend_policy { TOKEND_POLICY_DEFAULT = 0, TOKEND_POLICY_DILU = 1 };

/* Policy constants; the paper leaves them open, so they are flags. */
struct tokend_params {
  uint64_t capacity_ns;   /* device time per window: W (GPU), W * cpu-capacity (CPU) */
  double eta_violation;   /* KLC growth that means EMERGENCY (default 0.5 = +50%) */
  double eta_increase;    /* RECOVERY growth factor per window (default 1.2) */
  double headroom;        /* demand = used * (1 + headroom) + floor (default 0.25) */
  uint64_t floor_ns;      /* smallest demand of an active client (default W/50) */
};

/* One client's input to a window's plan. Fractions are of capacity_ns. */
struct tokend_pin {
  double request, limit;
  int slo;               /* SLO-sensitive (Algorithm 2) */
  int blocked;           /* it ran dry since the last window */
  uint64_t used_ns;      /* consumed since the last window */
  uint64_t launches;     /* kernel launches (or batches) since the last window */
  uint64_t klc_ns;       /* current kernel launch cycle; 0 = unknown */
  int llm;               /* RCKM: an LLM client (its minKLC and EMERGENCY threshold differ) */
};

/* What the policy keeps per client between windows. */
struct tokend_pstate {
  uint64_t rw[TOKEND_RW];
  unsigned rw_pos;
  uint64_t klc_min_ns, last_grant_ns;
  int64_t deficit_ns;
  int state;             /* enum tokend_state */
  double delta_t;        /* last relative KLC change (SLO clients) */
  /* RCKM (policy dilu), counted in windows: */
  unsigned run, zeros;   /* current run of busy windows (the KLC so far); idle windows since the last busy one */
  int last_busy;
  unsigned klc_min;      /* shortest KLC longer than 6 windows; 0 = none yet */
  unsigned klc_hist[TOKEND_RCKM_HIST], hist_pos;
  double last_o;         /* KLC / minKLC of the last cycle that ended */
};

/* RCKM per-device state: C and the low-priority clients' total L, fractions of UPPER (the device). */
struct tokend_rckm {
  double c, low_total;
  uint64_t cycles;       /* KLCs ended on this device */
};

/* Plan one window for n clients of one device: pure, no clock, no I/O.
 * Writes grant[i] (ns) and returns the device state (max over SLO clients). */
int tokend_plan(const struct tokend_params *p, size_t n, const struct tokend_pin *in,
                struct tokend_pstate *st, uint64_t *grant);

const char *tokend_state_name(int state);

/* rckm.c: Dilu's RCKM rule (`--policy dilu`); pure like tokend_plan. Grants may sum above
 * capacity (high clients' limits and the low clients' L are set apart, as in the artifact). */
void tokend_rckm_init(struct tokend_rckm *r);
int tokend_plan_rckm(const struct tokend_params *p, struct tokend_rckm *r, size_t n, const struct tokend_pin *in,
                     struct tokend_pstate *st, uint64_t *grant);
/* A high client left: C = (1 - Σrequest_high of the rest) · UPPER, L = C · Σlimit_low. */
void tokend_rckm_high_exit(struct tokend_rckm *r, double high_request_rest, double low_limit_sum);

/* A quota rule from the control socket; matches by pid, client id or cgroup prefix. */
struct tokend_rule {
  int used;
  int32_t pid;            /* 0 = any */
  uint64_t client_id;     /* 0 = any */
  char cgroup[128];       /* "" = any */
  uint32_t device;        /* TOKEND_DEVICE_CPU or a GPU index */
  double request, limit;
  int llm;
};

struct tokend_client {
  int used, fd, hello, slo;
  uint64_t id;
  pid_t pid;
  uid_t uid;
  char cgroup[128];
  uint32_t device;
  double request, limit;          /* the matching rule's, times sm_share */
  int llm;                        /* the matching rule's llm flag (RCKM) */
  double sm_share;                /* HELLO.b: the client's MPS SM share (1: none), the unit of its time */
  struct tokend_pin rep;          /* accumulated since the last window */
  uint64_t last_seen_window;
  struct tokend_pstate ps;
  uint64_t window_granted;        /* granted in the current window */
  uint64_t total_granted_ns, total_used_ns, total_launches;
  unsigned char rbuf[TOKEND_MSG_SIZE];
  size_t rlen;
};

struct tokend {
  struct tokend_params gpu, cpu;
  uint64_t window_ns, window_seq, window_start_ns;
  unsigned gpus;
  double default_request, default_limit;
  int policy;                     /* enum tokend_policy */
  struct tokend_rckm rckm[TOKEND_MAX_GPUS + 1]; /* per GPU, then the CPU device */
  int listen_fd, control_fd, timer_fd, epoll_fd, verbose;
  uint64_t next_id;
  struct tokend_client clients[TOKEND_MAX_CLIENTS];
  struct tokend_rule rules[TOKEND_MAX_RULES];
  char socket_path[108], control_path[108];
};

/* tokend.c */
void tokend_resolve_quota(struct tokend *d, struct tokend_client *c);
int tokend_send(struct tokend_client *c, uint16_t type, uint64_t a, uint64_t b, uint64_t c2, uint64_t d2);
const struct tokend_params *tokend_params_for(const struct tokend *d, uint32_t device);

/* control.c: handle one JSON line, write one JSON line (without newline) */
void tokend_control_line(struct tokend *d, const char *line, char *out, size_t outlen, uint64_t now);

#endif
