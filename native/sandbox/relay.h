#ifndef MLFAAS_SANDBOX_RELAY_H
#define MLFAAS_SANDBOX_RELAY_H
#include <stdint.h>

/* Where relayed connections go, inside the sandbox: `unix_path` first (may be NULL), else 127.0.0.1:`port` (0: none). */
struct relay_target { const char *unix_path; int port; };

/* Connections are registered on `epoll_fd`; their events carry a pointer for relay_event. */
void relay_init(int epoll_fd, struct relay_target target);
/* A connection accepted on the gateway's socket: joined to the target, or closed if it does not answer yet. */
void relay_accept(int client);
/* An epoll event whose data.ptr came from relay_accept's registrations. */
void relay_event(void *tag, uint32_t events);
/* Frees the connections closed during the last batch of events (call after each epoll_wait batch). */
void relay_reap(void);

#endif
