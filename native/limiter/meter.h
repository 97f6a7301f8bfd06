/* The device-time meter (meter.c): per-kernel launch costs learnt from CUDA
 * events. Internal to liblimiter.so. */
#ifndef TL_METER_H
#define TL_METER_H

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>

/* Driver functions the meter calls (resolved by hooks.c; not hooked). */
struct tl_event_api {
  CUresult (*create)(CUevent *, unsigned);
  CUresult (*record)(CUevent, CUstream);
  CUresult (*query)(CUevent);
  CUresult (*elapsed)(float *, CUevent, CUevent);
  CUresult (*destroy)(CUevent);
  CUresult (*ctx_current)(CUcontext *);
  CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *);
  CUresult (*stream_query)(CUstream);
  CUresult (*func_name)(const char **, CUfunction); /* TL_COSTS_FILE only */
  CUresult (*kernel_name)(const char **, CUkernel);
};

/* One launch between tl_meter_begin (charge, maybe record the start event)
 * and tl_meter_end (record the end event; refund a launch that failed). */
struct tl_launch {
  struct tl_kcost *k;
  uint64_t units, charged;
  CUstream stream;
  int graph, sample;
  uint32_t gate; /* the sample's gate (gate.c), 0: none */
};

void tl_meter_init(const struct tl_event_api *api, uint64_t fixed_ns_per_block, unsigned every, int names);
void tl_meter_dump(FILE *f); /* TL_COSTS_FILE */
void tl_meter_begin(struct tl_launch *l, uintptr_t key, uint64_t units, int graph, CUstream stream, int ptsz);
void tl_meter_end(struct tl_launch *l, CUresult r);
void tl_meter_harvest(void); /* at synchronize points */
void tl_meter_after_fork(void);

#endif
