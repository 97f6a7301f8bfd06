/* A swappable monotonic clock (nanoseconds, CLOCK_MONOTONIC by default).
 * Code that needs the time calls tl_clock_now(); a test can install its own
 * clock with tl_clock_set(). Pure policy code takes `now` as an argument. */
#ifndef TL_CLOCK_H
#define TL_CLOCK_H

#include <stdint.h>
#include <time.h>

typedef uint64_t (*tl_clock_fn)(void);

static inline uint64_t tl_clock_monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One clock per program (each binary defines TL_CLOCK_DEFINE once). */
extern tl_clock_fn tl_clock_impl;
#define TL_CLOCK_DEFINE tl_clock_fn tl_clock_impl = tl_clock_monotonic
static inline uint64_t tl_clock_now(void) { return tl_clock_impl(); }
static inline void tl_clock_set(tl_clock_fn fn) { tl_clock_impl = fn ? fn : tl_clock_monotonic; }

#endif
