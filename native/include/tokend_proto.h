/* tokend wire protocol: the one header shared by tokend, the CUDA limiter and
 * (re-implemented byte for byte) templates/ml-inference/tokens.js.
 *
 * Every message is one fixed 56-byte little-endian record on a SOCK_STREAM unix
 * socket. The header carries a magic number and a version; a peer that sees a
 * different magic or a newer major version closes the connection. Reserved
 * fields are zero on send and ignored on receive, so fields can be added
 * without changing the size.
 *
 *   client -> tokend  HELLO    device, flags(TOKEND_F_SLO), a=proposed window hint (ignored),
 *                              b=the client's MPS SM share in parts per million (0: none, 1.0):
 *                              its used_ns are device time x that share, and tokend scales
 *                              its request and limit by it (HAS-GPU's SM-share-weighted time)
 *   tokend -> client  WELCOME  a=window_ns, b=client id, c=capacity_ns per window
 *   client -> tokend  ACQUIRE  a=used_ns since last ACQUIRE, b=want_ns,
 *                              c=launches since last ACQUIRE, d=kernel launch cycle ns,
 *                              flags: TOKEND_F_BLOCKED when the client ran dry
 *   tokend -> client  GRANT    a=grant_ns (budget for this window), b=window_ns,
 *                              c=window sequence number, d=Dilu state of the client
 *   tokend -> client  REVOKE   a=cap_ns: the client clamps its budget to at most
 *                              this (a quota was lowered mid-window), b=window_ns
 *
 * Identity is never taken from the message: tokend reads SO_PEERCRED (pid,
 * uid) and /proc/<pid>/cgroup of the connecting process.
 */
#ifndef TOKEND_PROTO_H
#define TOKEND_PROTO_H

#include <stdint.h>

#define TOKEND_MAGIC 0x444e4b54u /* "TKND" little-endian */
#define TOKEND_VERSION 1u
#define TOKEND_MSG_SIZE 56u

#define TOKEND_DEVICE_CPU 0xffffu /* device number of the CPU device */

enum tokend_msg_type {
  TOKEND_HELLO = 1,
  TOKEND_WELCOME = 2,
  TOKEND_ACQUIRE = 3,
  TOKEND_GRANT = 4,
  TOKEND_REVOKE = 5,
};

enum tokend_msg_flags {
  TOKEND_F_SLO = 1u << 0,     /* HELLO: SLO-sensitive client (Dilu Algorithm 2) */
  TOKEND_F_BLOCKED = 1u << 1, /* ACQUIRE: the client waited for tokens */
};

/* Dilu Algorithm 2 states, reported in GRANT.d */
enum tokend_state {
  TOKEND_ST_NONE = 0,
  TOKEND_ST_CONTENTION = 1,
  TOKEND_ST_RECOVERY = 2,
  TOKEND_ST_EMERGENCY = 3,
};

struct tokend_msg {
  uint32_t magic;   /* TOKEND_MAGIC */
  uint16_t version; /* TOKEND_VERSION */
  uint16_t type;    /* enum tokend_msg_type */
  uint32_t device;  /* GPU index, or TOKEND_DEVICE_CPU */
  uint32_t flags;   /* enum tokend_msg_flags */
  uint64_t a, b, c, d;
  uint64_t reserved; /* zero; room for one more field */
};

_Static_assert(sizeof(struct tokend_msg) == TOKEND_MSG_SIZE, "wire size");

static inline void tokend_msg_init(struct tokend_msg *m, uint16_t type, uint32_t device) {
  *m = (struct tokend_msg){0};
  m->magic = TOKEND_MAGIC;
  m->version = TOKEND_VERSION;
  m->type = type;
  m->device = device;
}

static inline int tokend_msg_valid(const struct tokend_msg *m) {
  return m->magic == TOKEND_MAGIC && m->version == TOKEND_VERSION;
}

#endif
