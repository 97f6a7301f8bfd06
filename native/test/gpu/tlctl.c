/* tlctl: one request to tokend's control socket (native/tokend/control.c), no Node.js needed.
 *
 *   tlctl SOCKET 'JSON'                     send the line as is
 *   tlctl SOCKET quota PID REQUEST LIMIT    SET_QUOTA for a pid on gpu0
 *   tlctl SOCKET stats                      STATS
 *
 * Prints tokend's one-line answer. Exit 0 when it says "ok":true, 1 when it refuses,
 * 2 on usage errors, 3 when tokend cannot be reached or does not answer in 2 s.
 * tokend reads a control line for 100 ms at most and may close a connection unread on a
 * busy host (EPIPE / no answer): every request here is idempotent, so it is tried 3 times.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* One attempt: 0 with the answer in buf, -1 on a transport error. */
static int request(const char *path, const char *line, char *buf, size_t len) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct timeval tv = {2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  size_t n = strlen(line), t = 0;
  int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
           send(fd, line, n, MSG_NOSIGNAL) == (ssize_t)n && send(fd, "\n", 1, MSG_NOSIGNAL) == 1;
  while (ok && t < len - 1) { /* until the newline, EOF or the timeout */
    ssize_t k = read(fd, buf + t, len - 1 - t);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    t += (size_t)k;
    if (memchr(buf, '\n', t)) break;
  }
  close(fd);
  buf[t] = 0;
  return ok && t > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  char line[512], buf[65536];
  if (argc == 3 && strcmp(argv[2], "stats") == 0) snprintf(line, sizeof line, "{\"op\":\"STATS\"}");
  else if (argc == 6 && strcmp(argv[2], "quota") == 0)
    snprintf(line, sizeof line, "{\"op\":\"SET_QUOTA\",\"pid\":%s,\"device\":\"gpu0\",\"request\":%s,\"limit\":%s}",
             argv[3], argv[4], argv[5]);
  else if (argc == 3 && argv[2][0] == '{') snprintf(line, sizeof line, "%s", argv[2]);
  else {
    fprintf(stderr, "usage: tlctl SOCKET 'JSON' | tlctl SOCKET quota PID REQUEST LIMIT | tlctl SOCKET stats\n");
    return 2;
  }
  for (int attempt = 1; attempt <= 3; attempt++) {
    if (request(argv[1], line, buf, sizeof buf) == 0) {
      fputs(buf, stdout);
      if (!strchr(buf, '\n')) fputc('\n', stdout);
      return strstr(buf, "\"ok\":true") ? 0 : 1;
    }
    usleep(50000);
  }
  fprintf(stderr, "tlctl: %s: no answer (%s)\n", argv[1], strerror(errno));
  return 3;
}
