/* tokend main: configuration, sockets, the window timer and the client protocol.
 *
 * usage: tokend --socket PATH --control PATH [--window-ms 20] [--gpus 1]
 *               [--cpu-capacity 1.0] [--default-request 0] [--default-limit 1]
 *               [--eta-violation 0.5] [--eta-increase 1.2] [--policy default|dilu] [-v]
 *   --policy dilu: Dilu's RCKM rule (rckm.c) instead of the default window plan (policy.c)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "tl_clock.h"
#include "tokend.h"

TL_CLOCK_DEFINE;
static volatile sig_atomic_t g_stop;
static void on_signal(int s) { (void)s; g_stop = 1; }

#define LOG(d, ...) do { if ((d)->verbose) { fprintf(stderr, "tokend: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

static int parse_args(struct tokend *d, int argc, char **argv, char *err, size_t errlen) {
  double window_ms = 20, cpu_cap = 1.0, eta_v = 0.5, eta_i = 1.2;
  d->gpus = 1;
  d->default_request = 0;
  d->default_limit = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "-v") == 0) { d->verbose = 1; continue; }
    if (!v) { snprintf(err, errlen, "%s: missing value", a); return -1; }
    i++;
    if (strcmp(a, "--socket") == 0) snprintf(d->socket_path, sizeof d->socket_path, "%s", v);
    else if (strcmp(a, "--control") == 0) snprintf(d->control_path, sizeof d->control_path, "%s", v);
    else if (strcmp(a, "--window-ms") == 0) window_ms = atof(v);
    else if (strcmp(a, "--gpus") == 0) d->gpus = (unsigned)atoi(v);
    else if (strcmp(a, "--cpu-capacity") == 0) cpu_cap = atof(v);
    else if (strcmp(a, "--default-request") == 0) d->default_request = atof(v);
    else if (strcmp(a, "--default-limit") == 0) d->default_limit = atof(v);
    else if (strcmp(a, "--eta-violation") == 0) eta_v = atof(v);
    else if (strcmp(a, "--eta-increase") == 0) eta_i = atof(v);
    else if (strcmp(a, "--policy") == 0) {
      if (strcmp(v, "dilu") == 0) d->policy = TOKEND_POLICY_DILU;
      else if (strcmp(v, "default") == 0) d->policy = TOKEND_POLICY_DEFAULT;
      else { snprintf(err, errlen, "--policy=%s: want default or dilu", v); return -1; }
    } else { snprintf(err, errlen, "unknown option %s", a); return -1; }
  }
  if (!d->socket_path[0] || !d->control_path[0]) { snprintf(err, errlen, "--socket and --control are required"); return -1; }
  if (window_ms < 1 || window_ms > 1000) { snprintf(err, errlen, "--window-ms=%g: want 1..1000", window_ms); return -1; }
  if (d->gpus > TOKEND_MAX_GPUS) { snprintf(err, errlen, "--gpus=%u: at most %d", d->gpus, TOKEND_MAX_GPUS); return -1; }
  if (cpu_cap <= 0 || cpu_cap > 1024) { snprintf(err, errlen, "--cpu-capacity=%g: want (0, 1024]", cpu_cap); return -1; }
  if (d->default_limit <= 0 || d->default_limit > 1 || d->default_request < 0 || d->default_request > d->default_limit) {
    snprintf(err, errlen, "--default-request/--default-limit: want 0 <= request <= limit <= 1"); return -1;
  }
  if (eta_v <= 0 || eta_i < 1) { snprintf(err, errlen, "--eta-violation > 0 and --eta-increase >= 1 required"); return -1; }
  d->window_ns = (uint64_t)(window_ms * 1e6);
  for (unsigned g = 0; g <= TOKEND_MAX_GPUS; g++) tokend_rckm_init(&d->rckm[g]);
  d->gpu = (struct tokend_params){d->window_ns, eta_v, eta_i, 0.25, d->window_ns / 50};
  d->cpu = d->gpu;
  d->cpu.capacity_ns = (uint64_t)((double)d->window_ns * cpu_cap);
  d->cpu.floor_ns = d->cpu.capacity_ns / 50;
  return 0;
}

const struct tokend_params *tokend_params_for(const struct tokend *d, uint32_t device) {
  return device == TOKEND_DEVICE_CPU ? &d->cpu : &d->gpu;
}

static int listen_unix(const char *path, mode_t mode) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  unlink(path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) goto err;
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) goto err;
  if (chmod(path, mode) != 0) goto err;
  if (listen(fd, 64) != 0) goto err;
  return fd;
err:
  if (fd >= 0) close(fd);
  return -1;
}

static void read_cgroup(pid_t pid, char *out, size_t outlen) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
  out[0] = 0;
  FILE *f = fopen(path, "re");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    char *p = strstr(line, "::"); /* cgroup v2 unified line "0::/path" */
    if (!p) continue;
    p[strcspn(p, "\n")] = 0;
    snprintf(out, outlen, "%s", p + 2);
    break;
  }
  fclose(f);
}

static int rule_matches(const struct tokend_rule *r, const struct tokend_client *c) {
  if (!r->used || r->device != c->device) return 0;
  if (r->pid && r->pid != c->pid) return 0;
  if (r->client_id && r->client_id != c->id) return 0;
  if (r->cgroup[0] && strncmp(r->cgroup, c->cgroup, strlen(r->cgroup)) != 0) return 0;
  return 1;
}

/* The most specific matching rule wins: client id, then pid, then cgroup. */
void tokend_resolve_quota(struct tokend *d, struct tokend_client *c) {
  int best = -1, best_rank = -1;
  for (int i = 0; i < TOKEND_MAX_RULES; i++) {
    const struct tokend_rule *r = &d->rules[i];
    if (!rule_matches(r, c)) continue;
    int rank = r->client_id ? 3 : r->pid ? 2 : 1;
    if (rank > best_rank) { best = i; best_rank = rank; }
  }
  /* Under MPS a client at SM share s runs on s of the device: its time counts s-weighted (HAS-GPU's
   * occupancy), both what it reports and its quota, so a window's capacity holds Σ s_i q_i <= 1. */
  double s = c->sm_share > 0 && c->sm_share <= 1 ? c->sm_share : 1;
  c->request = (best >= 0 ? d->rules[best].request : d->default_request) * s;
  c->limit = (best >= 0 ? d->rules[best].limit : d->default_limit) * s;
  c->llm = best >= 0 ? d->rules[best].llm : 0;
}

static struct tokend_rckm *rckm_of(struct tokend *d, uint32_t device) {
  return &d->rckm[device == TOKEND_DEVICE_CPU ? TOKEND_MAX_GPUS : device];
}

int tokend_send(struct tokend_client *c, uint16_t type, uint64_t a, uint64_t b, uint64_t c2, uint64_t d2) {
  struct tokend_msg m;
  tokend_msg_init(&m, type, c->device);
  m.a = a; m.b = b; m.c = c2; m.d = d2;
  return send(c->fd, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof m ? 0 : -1;
}

/* RCKM: a high client exits, C = (1 - Σrequest_high of the rest) · UPPER. */
static void rckm_exit(struct tokend *d, const struct tokend_client *gone) {
  double high = 0, low_lim = 0;
  for (int i = 0; i < TOKEND_MAX_CLIENTS; i++) {
    const struct tokend_client *c = &d->clients[i];
    if (c == gone || !c->used || !c->hello || c->device != gone->device) continue;
    if (c->slo) high += c->request;
    else low_lim += c->limit;
  }
  tokend_rckm_high_exit(rckm_of(d, gone->device), high, low_lim);
}

static void drop_client(struct tokend *d, struct tokend_client *c, const char *why) {
  LOG(d, "client %llu pid %d gone: %s", (unsigned long long)c->id, (int)c->pid, why);
  if (d->policy == TOKEND_POLICY_DILU && c->hello && c->slo) rckm_exit(d, c);
  epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  *c = (struct tokend_client){0};
}

static void accept_client(struct tokend *d) {
  int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  struct ucred cr;
  socklen_t len = sizeof cr;
  struct tokend_client *c = NULL;
  for (int i = 0; i < TOKEND_MAX_CLIENTS && !c; i++)
    if (!d->clients[i].used) c = &d->clients[i];
  if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0) { close(fd); return; }
  *c = (struct tokend_client){.used = 1, .fd = fd, .id = ++d->next_id, .pid = cr.pid, .uid = cr.uid};
  read_cgroup(cr.pid, c->cgroup, sizeof c->cgroup);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
  epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  LOG(d, "client %llu pid %d uid %d cgroup %s", (unsigned long long)c->id, (int)c->pid, (int)c->uid, c->cgroup);
}

/* Mid-window top-up from capacity nobody was granted, up to the client's limit. */
static void grant_spare(struct tokend *d, struct tokend_client *c) {
  const struct tokend_params *p = tokend_params_for(d, c->device);
  uint64_t given = 0;
  for (int i = 0; i < TOKEND_MAX_CLIENTS; i++)
    if (d->clients[i].used && d->clients[i].hello && d->clients[i].device == c->device) given += d->clients[i].window_granted;
  uint64_t lim = (uint64_t)(c->limit * (double)p->capacity_ns);
  uint64_t now = tl_clock_now(), left_in_window = d->window_start_ns + d->window_ns > now ? d->window_start_ns + d->window_ns - now : 0;
  uint64_t spare = p->capacity_ns > given ? p->capacity_ns - given : 0;
  uint64_t room = lim > c->window_granted ? lim - c->window_granted : 0;
  uint64_t g = spare < room ? spare : room;
  g = (uint64_t)((double)g * (double)left_in_window / (double)d->window_ns); /* only the rest of the window */
  if (g < p->floor_ns) return;
  c->window_granted += g;
  c->total_granted_ns += g;
  tokend_send(c, TOKEND_GRANT, g, d->window_ns, d->window_seq, (uint64_t)c->ps.state);
}

static void on_message(struct tokend *d, struct tokend_client *c, const struct tokend_msg *m) {
  if (m->type == TOKEND_HELLO) {
    if (m->device != TOKEND_DEVICE_CPU && m->device >= d->gpus) { drop_client(d, c, "no such device"); return; }
    c->hello = 1;
    c->device = m->device;
    c->slo = (m->flags & TOKEND_F_SLO) != 0;
    c->sm_share = m->b > 0 && m->b <= 1000000 ? (double)m->b / 1e6 : 1;
    c->last_seen_window = d->window_seq;
    tokend_resolve_quota(d, c);
    tokend_send(c, TOKEND_WELCOME, d->window_ns, c->id, tokend_params_for(d, c->device)->capacity_ns, 0);
    return;
  }
  if (!c->hello) { drop_client(d, c, "message before HELLO"); return; }
  if (m->type != TOKEND_ACQUIRE) return;
  c->rep.used_ns += m->a;
  c->rep.launches += m->c;
  if (m->d) c->rep.klc_ns = m->d;
  c->total_used_ns += m->a;
  c->total_launches += m->c;
  c->last_seen_window = d->window_seq;
  if (m->flags & TOKEND_F_BLOCKED) {
    c->rep.blocked = 1;
    if (d->policy != TOKEND_POLICY_DILU) grant_spare(d, c); /* RCKM grants once per period */
  }
}

static void on_client_readable(struct tokend *d, struct tokend_client *c) {
  for (;;) {
    ssize_t n = recv(c->fd, c->rbuf + c->rlen, sizeof c->rbuf - c->rlen, 0);
    if (n == 0) { drop_client(d, c, "closed"); return; }
    if (n < 0) {
      if (errno != EAGAIN && errno != EINTR) drop_client(d, c, strerror(errno));
      return;
    }
    c->rlen += (size_t)n;
    if (c->rlen < sizeof c->rbuf) continue;
    struct tokend_msg m;
    memcpy(&m, c->rbuf, sizeof m);
    c->rlen = 0;
    if (!tokend_msg_valid(&m)) { drop_client(d, c, "bad magic or version"); return; }
    on_message(d, c, &m);
    if (!c->used) return;
  }
}

/* One window: plan every device, push GRANTs to clients heard in the last RW windows. */
static void on_tick(struct tokend *d) {
  d->window_seq++;
  d->window_start_ns = tl_clock_now();
  for (uint32_t dev = 0; dev <= d->gpus; dev++) {
    uint32_t device = dev == d->gpus ? TOKEND_DEVICE_CPU : dev;
    struct tokend_pin in[TOKEND_MAX_CLIENTS];
    struct tokend_pstate st[TOKEND_MAX_CLIENTS];
    struct tokend_client *who[TOKEND_MAX_CLIENTS];
    uint64_t grant[TOKEND_MAX_CLIENTS];
    size_t n = 0;
    for (int i = 0; i < TOKEND_MAX_CLIENTS; i++) {
      struct tokend_client *c = &d->clients[i];
      if (!c->used || !c->hello || c->device != device) continue;
      /* idle: no grants (RCKM counts its high clients' idle windows, so it plans for all) */
      if (d->policy != TOKEND_POLICY_DILU && d->window_seq - c->last_seen_window > TOKEND_RW) continue;
      in[n] = c->rep;
      in[n].request = c->request;
      in[n].limit = c->limit;
      in[n].slo = c->slo;
      in[n].llm = c->llm;
      st[n] = c->ps;
      who[n++] = c;
    }
    if (!n) continue;
    if (d->policy == TOKEND_POLICY_DILU) tokend_plan_rckm(tokend_params_for(d, device), rckm_of(d, device), n, in, st, grant);
    else tokend_plan(tokend_params_for(d, device), n, in, st, grant);
    for (size_t k = 0; k < n; k++) {
      struct tokend_client *c = who[k];
      c->ps = st[k];
      c->rep = (struct tokend_pin){0};
      c->window_granted = grant[k];
      c->total_granted_ns += grant[k];
      if (tokend_send(c, TOKEND_GRANT, grant[k], d->window_ns, d->window_seq, (uint64_t)c->ps.state) != 0)
        drop_client(d, c, "send failed");
    }
  }
}

static void on_control(struct tokend *d) {
  int fd = accept4(d->control_fd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0) return;
  struct ucred cr;
  socklen_t len = sizeof cr;
  char line[1024], out[16384];
  size_t have = 0;
  struct timeval tv = {0, 100000}; /* a silent peer stalls the loop at most 100 ms */
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || (cr.uid != 0 && cr.uid != geteuid())) {
    const char *deny = "{\"ok\":false,\"error\":\"control socket is root-only\"}\n";
    send(fd, deny, strlen(deny), MSG_NOSIGNAL);
    close(fd);
    return;
  }
  /* one request line per connection keeps the daemon single-threaded and simple */
  while (have < sizeof line - 1) {
    ssize_t n = recv(fd, line + have, sizeof line - 1 - have, 0);
    if (n <= 0) break;
    have += (size_t)n;
    if (memchr(line, '\n', have)) break;
  }
  line[have] = 0;
  line[strcspn(line, "\n")] = 0;
  tokend_control_line(d, line, out, sizeof out - 1, tl_clock_now());
  strcat(out, "\n");
  send(fd, out, strlen(out), MSG_NOSIGNAL);
  close(fd);
}

int main(int argc, char **argv) {
  static struct tokend d;
  char err[256];
  d.listen_fd = d.control_fd = d.timer_fd = d.epoll_fd = -1;
  if (parse_args(&d, argc, argv, err, sizeof err) != 0) { fprintf(stderr, "tokend: %s\n", err); return 2; }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  if ((d.listen_fd = listen_unix(d.socket_path, 0666)) < 0) { snprintf(err, sizeof err, "%s: %s", d.socket_path, strerror(errno)); goto err; }
  if ((d.control_fd = listen_unix(d.control_path, 0600)) < 0) { snprintf(err, sizeof err, "%s: %s", d.control_path, strerror(errno)); goto err; }
  if ((d.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0) { snprintf(err, sizeof err, "timerfd: %s", strerror(errno)); goto err; }
  struct itimerspec its = {{(time_t)(d.window_ns / 1000000000ull), (long)(d.window_ns % 1000000000ull)},
                           {(time_t)(d.window_ns / 1000000000ull), (long)(d.window_ns % 1000000000ull)}};
  timerfd_settime(d.timer_fd, 0, &its, NULL);
  d.window_start_ns = tl_clock_now();
  if ((d.epoll_fd = epoll_create1(EPOLL_CLOEXEC)) < 0) { snprintf(err, sizeof err, "epoll: %s", strerror(errno)); goto err; }
  struct epoll_event ev = {.events = EPOLLIN};
  ev.data.ptr = &d.listen_fd; epoll_ctl(d.epoll_fd, EPOLL_CTL_ADD, d.listen_fd, &ev);
  ev.data.ptr = &d.control_fd; epoll_ctl(d.epoll_fd, EPOLL_CTL_ADD, d.control_fd, &ev);
  ev.data.ptr = &d.timer_fd; epoll_ctl(d.epoll_fd, EPOLL_CTL_ADD, d.timer_fd, &ev);
  fprintf(stderr, "tokend: listening on %s (control %s), window %.1f ms, %u GPU(s) + cpu\n", d.socket_path,
          d.control_path, (double)d.window_ns / 1e6, d.gpus);
  while (!g_stop) {
    struct epoll_event evs[64];
    int n = epoll_wait(d.epoll_fd, evs, 64, 1000);
    for (int i = 0; i < n; i++) {
      void *p = evs[i].data.ptr;
      if (p == &d.listen_fd) accept_client(&d);
      else if (p == &d.control_fd) on_control(&d);
      else if (p == &d.timer_fd) {
        uint64_t ticks;
        if (read(d.timer_fd, &ticks, sizeof ticks) == sizeof ticks) on_tick(&d);
      } else {
        struct tokend_client *c = p;
        if (c->used) on_client_readable(&d, c);
      }
    }
  }
  unlink(d.socket_path);
  unlink(d.control_path);
  return 0;
err:
  fprintf(stderr, "tokend: %s\n", err);
  if (d.listen_fd >= 0) close(d.listen_fd);
  if (d.control_fd >= 0) close(d.control_fd);
  if (d.timer_fd >= 0) close(d.timer_fd);
  return 1;
}
