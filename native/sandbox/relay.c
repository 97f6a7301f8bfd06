/*
 * The sandbox's relay (see sandbox.c): connections accepted on the gateway's socket are joined to
 * the function inside the network namespace (a unix socket path first, else 127.0.0.1:port). One
 * epoll loop, no thread per connection; both ends are polled edge-triggered once for the
 * connection's life, and an event on either end pumps both directions until the kernel would
 * block (no epoll_ctl per event; a hang-up is seen once). 64 KiB per direction; a half-close is
 * passed on.
 */
#define _GNU_SOURCE
#include "relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>


#define RELAY_BUF 65536

struct conn;
struct end { struct conn *c; int i; };
struct conn {
  int fd[2];                /* 0: the gateway's side, 1: the function's */
  struct end ends[2];
  char buf[2][RELAY_BUF];   /* buf[i]: read from fd[i], to be written to fd[1 - i] */
  size_t len[2], off[2];
  int eof[2], shut[2];
  int gone[2];              /* fd[i] hung up: nothing more can be written to it */
  int closed;
  struct conn *next_dead;   /* freed after the epoll batch that closed it (its other end may be in it) */
};

static struct conn *g_dead;

static int g_epoll = -1;
static struct relay_target g_target;

static int connect_target(void) {
  if (g_target.unix_path) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(g_target.unix_path) < sizeof sa.sun_path) {
      strcpy(sa.sun_path, g_target.unix_path);
      int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) return fd;
      if (fd >= 0) close(fd);
    }
  }
  if (!g_target.port) return -1;
  struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g_target.port)};
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&in, sizeof in)) { close(fd); return -1; }
  return fd;
}

static void conn_close(struct conn *c) {
  for (int i = 0; i < 2; i++) {
    epoll_ctl(g_epoll, EPOLL_CTL_DEL, c->fd[i], NULL);
    close(c->fd[i]);
  }
  c->closed = 1;
  c->next_dead = g_dead;
  g_dead = c;
}

/* Direction `d`: writes what was read from fd[d] to fd[1 - d]; passes the end of input on. */
static int flush_dir(struct conn *c, int d) {
  int to = c->fd[1 - d];
  while (c->off[d] < c->len[d]) {
    ssize_t w = write(to, c->buf[d] + c->off[d], c->len[d] - c->off[d]);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (w <= 0) return -1;
    c->off[d] += (size_t)w;
  }
  c->len[d] = c->off[d] = 0;
  if (c->eof[d] && !c->shut[d]) { shutdown(to, SHUT_WR); c->shut[d] = 1; }
  return 0;
}

/* Moves direction `d` as far as it goes now: reads fd[d] while its buffer empties into fd[1 - d]. */
static int pump(struct conn *c, int d) {
  for (;;) {
    if (flush_dir(c, d) < 0) return -1;
    if (c->len[d] > c->off[d] || c->eof[d]) return 0; /* the other side is full, or input ended */
    ssize_t n = read(c->fd[d], c->buf[d], RELAY_BUF);
    if (n > 0) { c->len[d] = (size_t)n; c->off[d] = 0; continue; }
    if (n == 0) { c->eof[d] = 1; continue; } /* flush_dir passes the end on */
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

/*
 * Both ends are polled edge-triggered for input and output, once, for the connection's life: an
 * event on either end pumps both directions until the kernel would block (no epoll_ctl per event,
 * and a hang-up is reported once, not on every wait).
 */
void relay_event(void *tag, uint32_t events) {
  struct end *e = tag;
  struct conn *c = e->c;
  if (c->closed) return;
  if (events & (EPOLLHUP | EPOLLERR)) c->gone[e->i] = 1; /* what it still holds is read below */
  if (pump(c, 0) < 0 || pump(c, 1) < 0) { conn_close(c); return; }
  /* a direction is over once its end was passed on, or its destination hung up */
  int done0 = c->shut[0] || c->gone[1], done1 = c->shut[1] || c->gone[0];
  if (done0 && done1) conn_close(c);
}

void relay_accept(int client) {
  int up = connect_target();
  if (up < 0) { close(client); return; } /* not listening yet: the gateway's probe retries */
  struct conn *c = calloc(1, sizeof *c);
  if (!c) { close(client); close(up); return; }
  c->fd[0] = client;
  c->fd[1] = up;
  for (int i = 0; i < 2; i++) {
    fcntl(c->fd[i], F_SETFL, fcntl(c->fd[i], F_GETFL) | O_NONBLOCK);
    c->ends[i] = (struct end){c, i};
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = &c->ends[i]};
    if (epoll_ctl(g_epoll, EPOLL_CTL_ADD, c->fd[i], &ev)) {
      if (i == 1) epoll_ctl(g_epoll, EPOLL_CTL_DEL, c->fd[0], NULL);
      close(client); close(up); free(c);
      return;
    }
  }
}

void relay_init(int epoll_fd, struct relay_target target) {
  g_epoll = epoll_fd;
  g_target = target;
}

void relay_reap(void) {
  while (g_dead) {
    struct conn *d = g_dead;
    g_dead = d->next_dead;
    free(d);
  }
}
