/* The sample gate (gate.c): a sampled launch waits on the device for its own
 * launch call to finish. Internal to liblimiter.so. */
#ifndef TL_GATE_H
#define TL_GATE_H

#include <cuda.h>
#include <stdint.h>

struct tl_stats;

/* Driver functions the gate calls (resolved by hooks.c; not hooked). */
struct tl_gate_api {
  CUresult (*wait_value)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
  CUresult (*host_alloc)(void **, size_t, unsigned);
  CUresult (*host_dptr)(CUdeviceptr *, void *, unsigned);
};

void tl_gate_init(const struct tl_gate_api *api, int enabled);
uint32_t tl_gate_close(CUstream s); /* queues the gate on s: its value, 0 when none was queued */
void tl_gate_open(uint32_t seq);     /* the launching thread, once the end event is recorded */
void tl_gate_watchdog(uint64_t now); /* the client thread: opens gates closed too long */
void tl_gate_after_fork(void);
void tl_gate_stats(struct tl_stats *st);

#endif
