/*
 * mlfaas-sandbox: runs one function process confined, as a pod's container runtime would.
 *
 *   outer (the pid the agent holds, host pid namespace, root)
 *     joins the replica's cgroups, unshares mount/pid/net/uts/ipc namespaces, forks:
 *   init (pid 1 of the new pid namespace)
 *     builds a new root on a tmpfs (read-only host system dirs, the function's binds, a private
 *     /proc, a read-only /sys, a minimal /dev, size-limited tmpfs for /tmp and friends), brings up loopback only,
 *     opens the gateway's socket (a unix socket on the host, root-only), pivots into the new
 *     root, forks the function, drops to the function's uid and relays the gateway's
 *     connections to the function's port inside the namespace (relay.c); reaps orphans;
 *     forwards signals.
 *   function (pid 2): the function's uid and gid, no groups, no capabilities, no_new_privs.
 *
 * No command is looked up through PATH and no shell runs before privileges are dropped: the
 * function's environment (PATH, LD_*) only ever reaches the function's own exec. When the
 * outer process dies (the agent died), init dies (PDEATHSIG), and the kernel kills every
 * process of the namespace, daemonised or not.
 *
 * Usage: mlfaas-sandbox [options] -- argv...
 *   --cgroup FILE            join this cgroup.procs file first (repeatable)
 *   --uid N --gid N          the function's user
 *   --system PATH            host path seen read-only at the same path (a symlink stays a symlink)
 *   --ro-bind SRC DST        SRC read-only at DST          --bind SRC DST   read-write
 *   --dev PATH               host device node at the same path (GPUs)
 *   --tmpfs DST BYTES MODE OWNED   private tmpfs; OWNED=1: owned by the function's user
 *   --listen PATH            unix socket on the host (0600, root) relayed into the sandbox
 *   --target-port N          where relayed connections go: 127.0.0.1:N inside
 *   --target-unix PATH       tried first: a unix socket path inside the sandbox
 *   --chdir DIR  --preload LIB  --hostname NAME
 *   --veth HOSTIF HOSTIP NSIP PREFIX   egress: a veth pair, HOSTIF on the host (HOSTIP/PREFIX),
 *                            eth0 inside (NSIP/PREFIX, default route via HOSTIP); the host's
 *                            firewall (the agent's nftables table) decides where it may go
 */
#define _GNU_SOURCE
#include "relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ITEMS 64
#define NEW_ROOT "/var/openfaas/.sandbox-root"

struct pair { const char *a, *b; };
struct tmpfs { const char *dst; unsigned long long bytes; unsigned mode; int owned; };

static struct {
  const char *cgroups[MAX_ITEMS]; int ncgroups;
  const char *system[MAX_ITEMS]; int nsystem;
  struct pair binds[MAX_ITEMS]; int robind[MAX_ITEMS]; int nbinds;
  const char *devs[MAX_ITEMS]; int ndevs;
  struct tmpfs tmpfs[MAX_ITEMS]; int ntmpfs;
  uid_t uid; gid_t gid; int have_uid, have_gid;
  const char *listen, *target_unix, *chdir, *preload, *hostname;
  const char *veth_host, *veth_host_ip, *veth_ns_ip, *veth_prefix; /* --veth: egress to the internet */
  int target_port;
  char **argv;
} opt;

static void die(const char *fmt, ...) {
  va_list ap;
  int e = errno;
  fputs("mlfaas-sandbox: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, ": %s\n", strerror(e));
  _exit(126);
}

static void usage(const char *why) {
  fprintf(stderr, "mlfaas-sandbox: %s (see the comment at the top of native/sandbox/sandbox.c)\n", why);
  _exit(125);
}

static long num(const char *s, const char *what) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < 0 || v > INT_MAX) usage(what);
  return (long)v;
}

static void parse(int argc, char **argv) {
  int i = 1;
#define NEED(n) do { if (i + (n) >= argc) usage(argv[i]); } while (0)
#define ADD(arr, n) do { if ((n) >= MAX_ITEMS) usage("too many items"); } while (0)
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) { i++; break; }
    if (!strcmp(a, "--cgroup")) { NEED(1); ADD(opt.cgroups, opt.ncgroups); opt.cgroups[opt.ncgroups++] = argv[++i]; }
    else if (!strcmp(a, "--system")) { NEED(1); ADD(opt.system, opt.nsystem); opt.system[opt.nsystem++] = argv[++i]; }
    else if (!strcmp(a, "--ro-bind") || !strcmp(a, "--bind")) {
      NEED(2); ADD(opt.binds, opt.nbinds);
      opt.robind[opt.nbinds] = a[2] == 'r';
      opt.binds[opt.nbinds].a = argv[i + 1];
      opt.binds[opt.nbinds++].b = argv[i + 2];
      i += 2;
    }
    else if (!strcmp(a, "--dev")) { NEED(1); ADD(opt.devs, opt.ndevs); opt.devs[opt.ndevs++] = argv[++i]; }
    else if (!strcmp(a, "--tmpfs")) {
      NEED(4); ADD(opt.tmpfs, opt.ntmpfs);
      struct tmpfs *t = &opt.tmpfs[opt.ntmpfs++];
      t->dst = argv[i + 1];
      t->bytes = strtoull(argv[i + 2], NULL, 10);
      t->mode = (unsigned)strtoul(argv[i + 3], NULL, 8);
      t->owned = !strcmp(argv[i + 4], "1");
      if (!t->bytes) usage("--tmpfs needs a size in bytes");
      i += 4;
    }
    else if (!strcmp(a, "--uid")) { NEED(1); opt.uid = (uid_t)num(argv[++i], "--uid"); opt.have_uid = 1; }
    else if (!strcmp(a, "--gid")) { NEED(1); opt.gid = (gid_t)num(argv[++i], "--gid"); opt.have_gid = 1; }
    else if (!strcmp(a, "--listen")) { NEED(1); opt.listen = argv[++i]; }
    else if (!strcmp(a, "--target-port")) { NEED(1); opt.target_port = (int)num(argv[++i], "--target-port"); }
    else if (!strcmp(a, "--target-unix")) { NEED(1); opt.target_unix = argv[++i]; }
    else if (!strcmp(a, "--chdir")) { NEED(1); opt.chdir = argv[++i]; }
    else if (!strcmp(a, "--preload")) { NEED(1); opt.preload = argv[++i]; }
    else if (!strcmp(a, "--hostname")) { NEED(1); opt.hostname = argv[++i]; }
    else if (!strcmp(a, "--veth")) {
      NEED(4);
      opt.veth_host = argv[i + 1]; opt.veth_host_ip = argv[i + 2]; opt.veth_ns_ip = argv[i + 3]; opt.veth_prefix = argv[i + 4];
      if (strlen(opt.veth_host) > 15) usage("--veth: interface name longer than 15");
      i += 4;
    }
    else usage(a);
  }
  if (i >= argc) usage("no command after --");
  if (!opt.have_uid || !opt.have_gid || opt.uid == 0 || opt.gid == 0) usage("--uid and --gid (not 0) are required");
  if (opt.listen && !opt.target_port && !opt.target_unix) usage("--listen needs --target-port or --target-unix");
  opt.argv = &argv[i];
}

/* ---------- the network (iproute2's ip, by absolute path, with an empty environment) ---------- */

static const char *ip_bin(void) {
  static const char *const cands[] = {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"};
  for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) if (access(cands[i], X_OK) == 0) return cands[i];
  errno = ENOENT;
  die("iproute2's ip (for --veth)");
  return NULL;
}

static int ip_status(const char *const *args, int quiet) {
  const char *bin = ip_bin();
  pid_t p = fork();
  if (p < 0) die("fork");
  if (p == 0) {
    char *const envp[] = {NULL};
    if (quiet) { int fd = open("/dev/null", O_WRONLY); if (fd >= 0) dup2(fd, 2); }
    execve(bin, (char *const *)args, envp);
    _exit(127);
  }
  int st;
  while (waitpid(p, &st, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void run_ip(const char *const *args) {
  if (ip_status(args, 0) != 0) { errno = EIO; die("ip %s %s %s", args[1], args[2], args[3]); }
}

/*
 * outer, in the host's network namespace: the pair, eth0 created straight into init's namespace
 * (named by its /proc path: a pid would be read in the new pid namespace, where ip runs)
 */
static void veth_host_side(pid_t init) {
  char ns[64], cidr[64];
  snprintf(ns, sizeof ns, "/proc/%d/ns/net", (int)init);
  snprintf(cidr, sizeof cidr, "%s/%s", opt.veth_host_ip, opt.veth_prefix);
  /* the same replica's previous pair, if its namespace is still being torn down */
  ip_status((const char *const[]){"ip", "link", "del", opt.veth_host, NULL}, 1);
  run_ip((const char *const[]){"ip", "link", "add", opt.veth_host, "type", "veth", "peer", "name", "eth0", "netns", ns, NULL});
  run_ip((const char *const[]){"ip", "addr", "add", cidr, "dev", opt.veth_host, NULL});
  run_ip((const char *const[]){"ip", "link", "set", opt.veth_host, "up", NULL});
}

/* init, in its own network namespace: eth0's address and the default route; no IPv6 */
static void veth_ns_side(void) {
  char cidr[64];
  snprintf(cidr, sizeof cidr, "%s/%s", opt.veth_ns_ip, opt.veth_prefix);
  int fd = open("/proc/sys/net/ipv6/conf/eth0/disable_ipv6", O_WRONLY | O_CLOEXEC);
  if (fd >= 0) { if (write(fd, "1", 1) != 1) { /* no IPv6 on this kernel */ } close(fd); }
  run_ip((const char *const[]){"ip", "addr", "add", cidr, "dev", "eth0", NULL});
  run_ip((const char *const[]){"ip", "link", "set", "eth0", "up", NULL});
  run_ip((const char *const[]){"ip", "route", "add", "default", "via", opt.veth_host_ip, NULL});
}

/* ---------- building the new root (init, still root) ---------- */

static void mkdirs(const char *path, mode_t mode) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) { errno = ENAMETOOLONG; die("mkdir %s", path); }
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0755) && errno != EEXIST) die("mkdir %s", buf);
    *p = '/';
  }
  if (mkdir(buf, mode) && errno != EEXIST) die("mkdir %s", buf);
}

static void in_root(char *out, const char *path) {
  if (path[0] != '/') { errno = EINVAL; die("not an absolute path: %s", path); }
  if (snprintf(out, PATH_MAX, "%s%s", NEW_ROOT, path) >= PATH_MAX) { errno = ENAMETOOLONG; die("%s", path); }
}

/* A mount point of the same kind as `src` (a directory, or an empty file) at `dst` in the new root. */
static void mount_point(const char *src, const char *dst) {
  struct stat st;
  if (stat(src, &st)) die("stat %s", src);
  if (S_ISDIR(st.st_mode)) { mkdirs(dst, 0755); return; }
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s", dst);
  char *slash = strrchr(parent, '/');
  if (slash && slash != parent) { *slash = 0; mkdirs(parent, 0755); }
  int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST) die("create %s", dst);
  if (fd >= 0) close(fd);
}

static void bind_path(const char *src, const char *path, int ro, int dev) {
  char dst[PATH_MAX];
  in_root(dst, path);
  mount_point(src, dst);
  if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL)) die("bind %s at %s", src, path);
  unsigned long fl = MS_BIND | MS_REMOUNT | MS_NOSUID | (dev ? 0 : MS_NODEV) | (ro ? MS_RDONLY : 0);
  if (mount(NULL, dst, NULL, fl, NULL)) die("remount %s", path);
}

static void system_path(const char *path) {
  struct stat st;
  if (lstat(path, &st)) return; /* absent on this host: nothing to see */
  char dst[PATH_MAX];
  in_root(dst, path);
  if (S_ISLNK(st.st_mode)) { /* merged /usr: /bin -> usr/bin */
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0) die("readlink %s", path);
    target[n] = 0;
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", dst);
    *strrchr(parent, '/') = 0;
    mkdirs(parent, 0755);
    if (symlink(target, dst) && errno != EEXIST) die("symlink %s", path);
    return;
  }
  bind_path(path, path, 1, 0);
}

static void tmpfs_at(const char *path, unsigned long long bytes, unsigned mode, uid_t uid, gid_t gid) {
  char dst[PATH_MAX], data[128];
  in_root(dst, path);
  mkdirs(dst, 0755);
  snprintf(data, sizeof data, "size=%llu,mode=%o,uid=%u,gid=%u", bytes, mode, (unsigned)uid, (unsigned)gid);
  if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, data)) die("tmpfs at %s", path);
}

static void make_dev(void) {
  static const char *const std[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"};
  char dst[PATH_MAX];
  in_root(dst, "/dev");
  mkdirs(dst, 0755);
  if (mount("tmpfs", dst, "tmpfs", MS_NOSUID, "size=65536,mode=755")) die("tmpfs at /dev");
  for (size_t i = 0; i < sizeof std / sizeof *std; i++) {
    if (access(std[i], F_OK) == 0) bind_path(std[i], std[i], 0, 1);
  }
  for (int i = 0; i < opt.ndevs; i++) bind_path(opt.devs[i], opt.devs[i], 0, 1);
  static const char *const links[][2] = {{"/proc/self/fd", "/dev/fd"}, {"/proc/self/fd/0", "/dev/stdin"},
                                         {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"}};
  for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
    in_root(dst, links[i][1]);
    if (symlink(links[i][0], dst)) die("symlink %s", links[i][1]);
  }
}

static void loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) die("socket");
  struct ifreq ifr = {0};
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(s, SIOCGIFFLAGS, &ifr)) die("SIOCGIFFLAGS lo");
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(s, SIOCSIFFLAGS, &ifr)) die("SIOCSIFFLAGS lo");
  close(s);
}

/* The gateway's socket: made by root in a root-only directory of the host, before the pivot. */
static int open_listener(void) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(opt.listen) >= sizeof sa.sun_path) { errno = ENAMETOOLONG; die("--listen %s", opt.listen); }
  strcpy(sa.sun_path, opt.listen);
  unlink(opt.listen);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  mode_t old = umask(0077);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa)) die("bind %s", opt.listen);
  umask(old);
  if (listen(fd, 512)) die("listen %s", opt.listen);
  return fd;
}

static void build_root(void) {
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) die("make / private");
  mkdirs(NEW_ROOT, 0755);
  if (mount("tmpfs", NEW_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=1048576,mode=755")) die("tmpfs root");
  for (int i = 0; i < opt.nsystem; i++) system_path(opt.system[i]);
  char dst[PATH_MAX];
  in_root(dst, "/proc");
  mkdirs(dst, 0555);
  if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) die("mount /proc");
  /* sysfs as a container has it, read-only: its net class shows this namespace's loopback only */
  in_root(dst, "/sys");
  mkdirs(dst, 0555);
  if (mount("sysfs", dst, "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) die("mount /sys");
  make_dev();
  for (int i = 0; i < opt.ntmpfs; i++) {
    struct tmpfs *t = &opt.tmpfs[i];
    tmpfs_at(t->dst, t->bytes, t->mode, t->owned ? opt.uid : 0, t->owned ? opt.gid : 0);
  }
  for (int i = 0; i < opt.nbinds; i++) bind_path(opt.binds[i].a, opt.binds[i].b, opt.robind[i], 0);
}

static void pivot(void) {
  char old[PATH_MAX];
  in_root(old, "/.old-root");
  mkdirs(old, 0700);
  if (syscall(SYS_pivot_root, NEW_ROOT, old)) die("pivot_root");
  if (chdir("/")) die("chdir /");
  if (umount2("/.old-root", MNT_DETACH)) die("umount old root");
  if (rmdir("/.old-root")) die("rmdir /.old-root");
  if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=1048576,mode=755")) die("remount / read-only");
}

static void drop_privileges(void) {
  if (setgroups(0, NULL)) die("setgroups");
  if (setresgid(opt.gid, opt.gid, opt.gid)) die("setresgid");
  if (setresuid(opt.uid, opt.uid, opt.uid)) die("setresuid");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) die("no_new_privs");
}

static int exit_status(int st) {
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const int FORWARDED[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

static sigset_t handled_set(void) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGCHLD);
  for (size_t i = 0; i < sizeof FORWARDED / sizeof *FORWARDED; i++) sigaddset(&s, FORWARDED[i]);
  return s;
}

/* pid 1: relays connections, forwards signals to the function, reaps everything, exits with it. */
static char SIG_TAG, LISTEN_TAG, PARENT_TAG;

static void init_loop(pid_t fn, int listener, int parent_pipe) {
  sigset_t s = handled_set();
  int sfd = signalfd(-1, &s, SFD_CLOEXEC);
  if (sfd < 0) die("signalfd");
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  relay_init(ep, (struct relay_target){opt.target_unix, opt.target_port});
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &SIG_TAG};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev)) die("epoll_ctl");
  if (listener >= 0) {
    ev.data.ptr = &LISTEN_TAG;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev)) die("epoll_ctl");
  }
  ev.data.ptr = &PARENT_TAG;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, parent_pipe, &ev)) die("epoll_ctl");
  struct epoll_event evs[64];
  for (;;) {
    int n = epoll_wait(ep, evs, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int k = 0; k < n; k++) {
      void *tag = evs[k].data.ptr;
      if (tag == &SIG_TAG) {
        struct signalfd_siginfo si;
        if (read(sfd, &si, sizeof si) == sizeof si && si.ssi_signo != SIGCHLD) kill(fn, (int)si.ssi_signo);
        int st;
        pid_t w;
        while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
          if (w == fn) _exit(exit_status(st)); /* the kernel kills the rest of the namespace */
        }
      } else if (tag == &PARENT_TAG) {
        _exit(137); /* the outer process is gone (the agent died): the namespace goes with us */
      } else if (tag == &LISTEN_TAG) {
        int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (c >= 0) relay_accept(c);
      } else {
        relay_event(tag, evs[k].events);
      }
    }
    relay_reap();
  }
}

static void run_function(void) {
  sigset_t none;
  sigemptyset(&none);
  for (size_t i = 0; i < sizeof FORWARDED / sizeof *FORWARDED; i++) signal(FORWARDED[i], SIG_DFL);
  signal(SIGCHLD, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  drop_privileges();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL)) die("pdeathsig");
  if (opt.preload && setenv("LD_PRELOAD", opt.preload, 1)) die("setenv");
  execvp(opt.argv[0], opt.argv); /* PATH is the function's own, searched as the function's user */
  die("exec %s", opt.argv[0]);
}

static void init_main(int parent_pipe, int ready) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL)) die("pdeathsig");
  if (unshare(CLONE_NEWNET)) die("unshare the network");
  if (opt.veth_host) {
    /* the outer process (still in the host's namespace) adds the pair, then says go */
    char go = 0;
    if (write(ready, "r", 1) != 1) die("tell the outer process");
    if (read(parent_pipe, &go, 1) != 1 || go != 'g') _exit(137);
    veth_ns_side();
  }
  close(ready);
  build_root();
  int listener = opt.listen ? open_listener() : -1;
  loopback_up();
  if (opt.hostname && sethostname(opt.hostname, strlen(opt.hostname))) die("sethostname");
  pivot();
  if (opt.chdir && chdir(opt.chdir)) die("chdir %s", opt.chdir);
  pid_t fn = fork();
  if (fn < 0) die("fork");
  if (fn == 0) run_function();
  drop_privileges(); /* init relays as the function's user; it is not dumpable (set*id) */
  /* a credential change clears PDEATHSIG: set it again; the pipe covers an outer that died before */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL)) die("pdeathsig");
  init_loop(fn, listener, parent_pipe);
}

int main(int argc, char **argv) {
  parse(argc, argv);
  if (geteuid() != 0) { errno = EPERM; die("must run as root"); }
  pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL)) die("pdeathsig");
  if (getppid() != parent) _exit(137); /* the agent is already gone */
  char me[32];
  int melen = snprintf(me, sizeof me, "%d\n", (int)getpid());
  for (int i = 0; i < opt.ncgroups; i++) {
    int fd = open(opt.cgroups[i], O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, me, (size_t)melen) != melen) die("join cgroup %s", opt.cgroups[i]);
    close(fd);
  }
  /* the network namespace is init's alone: the outer process stays in the host's, for --veth */
  if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC)) die("unshare");
  sigset_t s = handled_set();
  sigprocmask(SIG_BLOCK, &s, NULL);
  int life[2]; /* init sees EOF on life[0] when the outer process dies, however it dies */
  int ready[2]; /* init → outer: its network namespace exists */
  if (pipe2(life, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) die("pipe");
  pid_t init = fork();
  if (init < 0) die("fork");
  if (init == 0) {
    close(life[1]);
    close(ready[0]);
    init_main(life[0], ready[1]);
  }
  close(life[0]);
  close(ready[1]);
  if (opt.veth_host) {
    char r = 0;
    if (read(ready[0], &r, 1) != 1) { /* init failed before: exit as it did */
      int st;
      while (waitpid(init, &st, 0) < 0 && errno == EINTR) {}
      return exit_status(st);
    }
    veth_host_side(init);
    if (write(life[1], "g", 1) != 1) die("tell init");
  }
  close(ready[0]);
  /* outer: forward signals to init (which forwards them to the function), exit as it does */
  for (;;) {
    int sig;
    if (sigwait(&s, &sig)) continue;
    if (sig != SIGCHLD) { kill(init, sig); continue; }
    int st;
    if (waitpid(init, &st, WNOHANG) == init) {
      if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        raise(WTERMSIG(st));
      }
      return exit_status(st);
    }
  }
}
