/* Device-memory cap: allocations are reserved against TL_MEM_LIMIT before the
 * driver sees them; frees return what the matching allocation reserved.
 * Sizes are kept in an open-addressing table (allocation is not a hot path). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "limiter.h"

#define TL_MEM_SLOTS (1u << 16)
#define TL_TOMB UINT64_MAX

static struct { uint64_t ptr, bytes; } g_tab[TL_MEM_SLOTS];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t g_used, g_denied, g_untracked;

static uint32_t slot_of(uint64_t p) { return (uint32_t)((p >> 8) * 0x9E3779B97F4A7C15ull >> 48) & (TL_MEM_SLOTS - 1); }

int tl_mem_reserve(uint64_t bytes) {
  uint64_t lim = tl_cfg.mem_limit;
  uint64_t after = atomic_fetch_add(&g_used, bytes) + bytes;
  if (lim && after > lim) {
    atomic_fetch_sub(&g_used, bytes);
    atomic_fetch_add(&g_denied, 1);
    tl_log("cuMemAlloc of %llu bytes denied: %llu of %llu in use", (unsigned long long)bytes,
           (unsigned long long)(after - bytes), (unsigned long long)lim);
    return -1;
  }
  return 0;
}

void tl_mem_unreserve(uint64_t bytes) { atomic_fetch_sub(&g_used, bytes); }

void tl_mem_record(uint64_t ptr, uint64_t bytes) {
  pthread_mutex_lock(&g_mu);
  uint32_t i = slot_of(ptr);
  for (uint32_t n = 0; n < TL_MEM_SLOTS; n++, i = (i + 1) & (TL_MEM_SLOTS - 1)) {
    if (g_tab[i].ptr == 0 || g_tab[i].ptr == TL_TOMB) {
      g_tab[i].ptr = ptr;
      g_tab[i].bytes = bytes;
      pthread_mutex_unlock(&g_mu);
      return;
    }
  }
  pthread_mutex_unlock(&g_mu);
  atomic_fetch_add(&g_untracked, 1); /* table full: the bytes stay counted */
}

void tl_mem_release(uint64_t ptr) {
  if (!ptr) return;
  pthread_mutex_lock(&g_mu);
  uint32_t i = slot_of(ptr);
  for (uint32_t n = 0; n < TL_MEM_SLOTS && g_tab[i].ptr; n++, i = (i + 1) & (TL_MEM_SLOTS - 1)) {
    if (g_tab[i].ptr == ptr) {
      atomic_fetch_sub(&g_used, g_tab[i].bytes);
      g_tab[i].ptr = TL_TOMB;
      g_tab[i].bytes = 0;
      break;
    }
  }
  pthread_mutex_unlock(&g_mu);
}

uint64_t tl_mem_used(void) { return atomic_load(&g_used); }

void tl_mem_stats(struct tl_stats *st) {
  st->mem_used = atomic_load(&g_used);
  st->mem_denied = atomic_load(&g_denied);
}
