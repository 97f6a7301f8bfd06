/* The GPU-time budget and the tokend client thread.
 *
 * Hot path (tl_budget_charge): one relaxed atomic fetch_sub of the launch's
 * cost (ns of device time, from meter.c) from `tokens`; thread-local counters
 * otherwise. No lock and no system call unless the budget ran dry. A launch
 * whose device time was measured later is trued up (tl_budget_true_up): the
 * difference goes back into, or is taken from, the same word.
 *
 * A background thread talks to tokend (tokend_proto.h): on each GRANT it sets
 * tokens = grant + debt (overdraft is carried; unused tokens up to a quarter
 * of the grant, the rest expires with the window), wakes waiters and answers with an ACQUIRE reporting what was used.
 * When the budget runs dry it sends an ACQUIRE flagged BLOCKED at once. When
 * tokend has been silent for TL_TIMEOUT_MS the limiter fails open (or keeps
 * waiting with TL_FAIL=closed), keeps reconnecting and counts both.
 *
 * What a launch costs is the meter's business (meter.c): the device time its
 * kernel occupied, measured with CUDA events, so host time between launches
 * and the time a kernel waits for another context are never charged. Under MPS
 * the budget's unit is SM-share-weighted time (TL_SM_SHARE, told to tokend in
 * HELLO): a process on a quarter of the SMs pays a quarter per ns, and tokend
 * scales its quota by the same share, so replicas on disjoint SM shares run at
 * the same time without taking each other's budget.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "gate.h"
#include "limiter.h"
#include "meter.h"
#include "tl_clock.h"
#include "tokend_proto.h"

#define TL_UNLIMITED (INT64_MAX / 4)
static struct {
  _Alignas(64) _Atomic int64_t tokens; /* the hot word, alone on its cache line */
  _Alignas(64) _Atomic int started, open, waiters;
  _Atomic uint64_t last_heard_ns;
  _Atomic uint64_t launches, graph_launches, throttled, throttled_ns, failopen;
  _Atomic uint64_t connects, disconnects, grants, revokes, granted_ns, charged_ns, cost_ns;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_key_t tls_key;
  int wake_fd; /* eventfd: a thread that ran dry wakes the client thread at once */
  /* owned by the client thread */
  int fd;
  int64_t base;        /* tokens right after the last refill, for usage */
  uint64_t window_ns, last_report_ns, last_launches;
  uint64_t reported; /* of the tokens used since the last refill, how many tokend has heard of */
  int sent_blocked, blocked_in_window;
} g = {.fd = -1, .wake_fd = -1, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

struct tl_thread {
  uint64_t launches, graphs;
  int64_t cost; /* ns charged since the last flush (true-ups may make it negative) */
  int registered;
};
static __thread struct tl_thread t;

static void flush_thread(struct tl_thread *th) {
  if (th->launches) atomic_fetch_add_explicit(&g.launches, th->launches, memory_order_relaxed);
  if (th->graphs) atomic_fetch_add_explicit(&g.graph_launches, th->graphs, memory_order_relaxed);
  if (th->cost) atomic_fetch_add_explicit(&g.cost_ns, (uint64_t)th->cost, memory_order_relaxed);
  th->launches = th->graphs = 0;
  th->cost = 0;
}

static void thread_exit(void *p) { flush_thread(p); }

/* Overdraft is carried whole; unused tokens up to a quarter of the grant (the bucket's depth above
 * one window). A launch is charged when issued, ahead of its execution, so a process below its quota
 * on average still crosses a window's end with work charged early; without the carry it waited for
 * the next grant there (quota 1.0 cost 2-3 % of a framework loop's throughput on a loaded host).
 * Over any interval T a process uses at most quota x T + a quarter window. */
static void set_tokens_for_grant(int64_t grant) {
  int64_t cur = atomic_load(&g.tokens), nv, carry = atomic_load(&g.open) ? 0 : grant / 4;
  do {
    nv = (cur < 0 ? cur : cur < carry ? cur : carry) + grant;
  } while (!atomic_compare_exchange_weak(&g.tokens, &cur, nv));
  if (!atomic_load(&g.open) && g.base >= cur) atomic_fetch_add(&g.charged_ns, (uint64_t)(g.base - cur));
  g.base = nv;
  atomic_store(&g.open, 0);
}

static void wake_all(void) {
  pthread_mutex_lock(&g.mu);
  pthread_cond_broadcast(&g.cv);
  pthread_mutex_unlock(&g.mu);
}

static void go_open(void) {
  if (atomic_exchange(&g.open, 1)) return;
  atomic_store(&g.tokens, TL_UNLIMITED);
  atomic_fetch_add(&g.failopen, 1);
  tl_log("tokend silent for %llu ms: failing open", (unsigned long long)(tl_cfg.timeout_ns / 1000000));
  wake_all();
}

static int send_msg(const struct tokend_msg *m) {
  ssize_t n = send(g.fd, m, sizeof *m, MSG_NOSIGNAL);
  return n == (ssize_t)sizeof *m ? 0 : -1;
}

/*
 * Device time used since the last refill that tokend has not heard of yet, marked as heard.
 * Taken before a refill resets g.base (computed after it, the report said almost nothing, and
 * tokend's policy takes reported use as demand); a report sent mid-window when a launch blocks
 * is not counted again at the grant.
 */
static uint64_t unreported_use(void) {
  int64_t cur = atomic_load(&g.tokens);
  uint64_t used = g.base > cur ? (uint64_t)(g.base - cur) : 0;
  uint64_t fresh = used > g.reported ? used - g.reported : 0;
  g.reported = used > g.reported ? used : g.reported;
  return fresh;
}

/* Reports `used` ns of device time (see unreported_use) and the launch cycle to tokend. */
static int send_acquire(int blocked, uint64_t used) {
  struct tokend_msg m;
  uint64_t now = tl_clock_now(), launches = atomic_load(&g.launches) + atomic_load(&g.graph_launches);
  uint64_t dl = launches - g.last_launches, period = now - g.last_report_ns;
  tokend_msg_init(&m, TOKEND_ACQUIRE, tl_cfg.device);
  m.flags = (blocked || g.blocked_in_window) ? TOKEND_F_BLOCKED : 0;
  m.a = used;
  m.b = m.flags & TOKEND_F_BLOCKED ? UINT64_MAX : used + used / 4;
  m.c = dl;
  m.d = dl ? period / dl : 0; /* kernel launch cycle, ns */
  g.last_launches = launches;
  g.last_report_ns = now;
  return send_msg(&m);
}

static void disconnect(const char *why) {
  if (g.fd < 0) return;
  close(g.fd);
  g.fd = -1;
  atomic_fetch_add(&g.disconnects, 1);
  tl_log("disconnected from tokend: %s", why);
}

static int connect_tokend(void) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  struct tokend_msg m;
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", tl_cfg.socket_path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) goto err;
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) goto err;
  tokend_msg_init(&m, TOKEND_HELLO, tl_cfg.device);
  m.flags = tl_cfg.slo ? TOKEND_F_SLO : 0;
  m.b = tl_cfg.sm_share_ppm < 1000000 ? tl_cfg.sm_share_ppm : 0;
  g.fd = fd;
  if (send_msg(&m) != 0) { g.fd = -1; goto err; }
  atomic_fetch_add(&g.connects, 1);
  tl_log("connected to tokend %s", tl_cfg.socket_path);
  return 0;
err:
  if (fd >= 0) close(fd);
  return -1;
}

static void handle(const struct tokend_msg *m) {
  atomic_store(&g.last_heard_ns, tl_clock_now());
  switch (m->type) {
    case TOKEND_WELCOME:
      g.window_ns = m->a;
      g.last_report_ns = tl_clock_now();
      g.base = atomic_load(&g.tokens);
      g.reported = 0;
      send_acquire(1, 0); /* a new client wants tokens now */
      break;
    case TOKEND_GRANT: {
      uint64_t used = unreported_use();
      g.reported = 0; /* the refill starts a new count */
      atomic_fetch_add(&g.grants, 1);
      atomic_fetch_add(&g.granted_ns, m->a);
      if (m->b) g.window_ns = m->b;
      set_tokens_for_grant((int64_t)m->a);
      wake_all();
      if (send_acquire(0, used) != 0) disconnect("send failed");
      g.sent_blocked = g.blocked_in_window = 0;
      break;
    }
    case TOKEND_REVOKE: {
      atomic_fetch_add(&g.revokes, 1);
      int64_t cap = (int64_t)m->a, cur = atomic_load(&g.tokens);
      while (cur > cap && !atomic_compare_exchange_weak(&g.tokens, &cur, cap)) {}
      if (cur > cap) g.base -= cur - cap;
      break;
    }
    default:
      break;
  }
}

static void *client_main(void *arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  unsigned char buf[TOKEND_MSG_SIZE];
  size_t have = 0;
  uint64_t last_try = 0;
  for (;;) {
    uint64_t now = tl_clock_now();
    tl_gate_watchdog(now); /* at least every 2 ms: no sampled launch waits on its gate for long */
    if (g.fd < 0 && now - last_try >= 20000000ull) {
      last_try = now;
      if (connect_tokend() != 0) have = 0;
    }
    if (tl_cfg.fail == TL_FAIL_OPEN && now - atomic_load(&g.last_heard_ns) > tl_cfg.timeout_ns) go_open();
    if (g.fd < 0) { usleep(2000); continue; }
    if (atomic_load(&g.waiters) > 0 && !g.sent_blocked) {
      g.sent_blocked = g.blocked_in_window = 1;
      if (send_acquire(1, unreported_use()) != 0) { disconnect("send failed"); continue; }
    }
    struct pollfd p[2] = {{.fd = g.fd, .events = POLLIN}, {.fd = g.wake_fd, .events = POLLIN}};
    if (poll(p, g.wake_fd >= 0 ? 2 : 1, 2) <= 0) continue;
    if (p[1].revents & POLLIN) {
      uint64_t x;
      if (read(g.wake_fd, &x, sizeof x) < 0) {} /* drained; the waiters are seen at the top */
    }
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = recv(g.fd, buf + have, sizeof buf - have, 0);
    if (n <= 0) {
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      disconnect(n == 0 ? "closed by tokend" : strerror(errno));
      have = 0;
      continue;
    }
    have += (size_t)n;
    if (have < sizeof buf) continue;
    have = 0;
    struct tokend_msg m;
    memcpy(&m, buf, sizeof m);
    if (!tokend_msg_valid(&m)) { disconnect("bad magic or version"); continue; }
    handle(&m);
  }
  return NULL;
}

void tl_budget_start(void) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&g.started, &expected, 1)) return;
  pthread_key_create(&g.tls_key, thread_exit);
  if (!tl_cfg.socket_path[0]) { /* no tokend: meter nothing */
    atomic_store(&g.tokens, TL_UNLIMITED);
    atomic_store(&g.open, 1);
    return;
  }
  atomic_store(&g.tokens, 0);
  atomic_store(&g.last_heard_ns, tl_clock_now());
  g.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&th, &at, client_main, NULL) != 0) {
    tl_log("cannot start the tokend client thread; failing open");
    go_open();
  }
  pthread_attr_destroy(&at);
}

static void wait_for_tokens(void) {
  uint64_t t0 = tl_clock_now();
  atomic_fetch_add_explicit(&g.throttled, 1, memory_order_relaxed);
  pthread_mutex_lock(&g.mu);
  if (atomic_fetch_add(&g.waiters, 1) == 0 && g.wake_fd >= 0) {
    uint64_t one = 1;
    if (write(g.wake_fd, &one, sizeof one) < 0) {} /* the client thread polls every 2 ms anyway */
  }
  while (atomic_load(&g.tokens) < 0 && !atomic_load(&g.open)) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 2000000;
    if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
    pthread_cond_timedwait(&g.cv, &g.mu, &ts);
  }
  atomic_fetch_sub(&g.waiters, 1);
  pthread_mutex_unlock(&g.mu);
  atomic_fetch_add_explicit(&g.throttled_ns, tl_clock_now() - t0, memory_order_relaxed);
}

/* Device time in the budget's unit: times the SM share under MPS (1 without). */
static inline int64_t occupancy(uint64_t ns) {
  uint32_t ppm = tl_cfg.sm_share_ppm;
  return ppm >= 1000000 ? (int64_t)ns : (int64_t)((ns * (uint64_t)ppm) / 1000000u);
}

void tl_budget_charge(uint64_t cost_ns, int graph) {
  if (__builtin_expect(!atomic_load_explicit(&g.started, memory_order_relaxed), 0)) tl_budget_start();
  int64_t cost = cost_ns ? occupancy(cost_ns) : 1;
  if (cost <= 0) cost = 1;
  if (__builtin_expect(atomic_fetch_sub_explicit(&g.tokens, cost, memory_order_relaxed) < cost, 0))
    wait_for_tokens();
  t.cost += (int64_t)cost_ns;
  if (graph) t.graphs++;
  else t.launches++;
  if (__builtin_expect(!t.registered, 0)) {
    t.registered = 1;
    pthread_setspecific(g.tls_key, &t);
  }
  if (((t.launches + t.graphs) & 15) == 0) flush_thread(&t);
}

/* Not on the hot path: once per sampled launch, when its events are read. */
void tl_budget_true_up(uint64_t charged_ns, uint64_t actual_ns) {
  int64_t back = (int64_t)charged_ns - (int64_t)actual_ns;
  if (!back) return;
  t.cost -= back;
  int64_t units = back > 0 ? occupancy((uint64_t)back) : -occupancy((uint64_t)-back);
  if (!atomic_load_explicit(&g.open, memory_order_relaxed)) atomic_fetch_add_explicit(&g.tokens, units, memory_order_relaxed);
}

/* In the child: no client thread, a fresh identity for tokend, no inherited budget. */
void tl_budget_after_fork(void) {
  if (g.fd >= 0) close(g.fd);
  g.fd = -1;
  if (g.wake_fd >= 0) close(g.wake_fd);
  g.wake_fd = -1;
  pthread_mutex_init(&g.mu, NULL);
  pthread_cond_init(&g.cv, NULL);
  atomic_store(&g.waiters, 0);
  t = (struct tl_thread){0};
  tl_meter_after_fork();
  tl_gate_after_fork();
  if (atomic_load(&g.started) && tl_cfg.socket_path[0]) {
    atomic_store(&g.started, 0);
    atomic_store(&g.open, 0);
    g.sent_blocked = g.blocked_in_window = 0;
    g.base = 0;
    g.reported = 0;
    g.last_launches = atomic_load(&g.launches) + atomic_load(&g.graph_launches);
  }
}

void tl_budget_stats(struct tl_stats *st) {
  flush_thread(&t);
  st->launches = atomic_load(&g.launches);
  st->graph_launches = atomic_load(&g.graph_launches);
  st->throttled = atomic_load(&g.throttled);
  st->throttled_ns = atomic_load(&g.throttled_ns);
  st->failopen = atomic_load(&g.failopen);
  st->connects = atomic_load(&g.connects);
  st->disconnects = atomic_load(&g.disconnects);
  st->grants = atomic_load(&g.grants);
  st->revokes = atomic_load(&g.revokes);
  st->granted_ns = atomic_load(&g.granted_ns);
  st->charged_ns = atomic_load(&g.charged_ns);
  st->cost_ns = atomic_load(&g.cost_ns);
}
