/* Dilu's RCKM rule (tokend --policy dilu, rckm.c): the spec's state transitions and numbers,
 * driven window by window (pure: no clock, no sockets). Capacity 5 ms per window (the artifact's
 * period); C and L are fractions of UPPER (the whole device). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tokend.h"

#define MS 1000000ull
#define CAP (5 * MS)

static const struct tokend_params P = {CAP, 0.5, 1.2, 0.25, CAP / 50};
static int failed, total;

static void check(int ok, const char *what, double got, double want) {
  total++;
  if (!ok) failed++;
  printf("%s %s: got %.6g want %.6g\n", ok ? "ok  " : "FAIL", what, got, want);
}
static void near(const char *what, double got, double want) { check(fabs(got - want) <= 1e-9 + 1e-6 * fabs(want), what, got, want); }

/* Clients: 0 = high (SLO) <0.5, 1.0>, 1 and 2 = low <0.2, 0.4> and <0.3, 0.6>. */
struct world {
  struct tokend_rckm r;
  struct tokend_pin in[3];
  struct tokend_pstate st[3];
  uint64_t grant[3];
  size_t n;
  int state;
};

static void init(struct world *w, size_t n, int llm) {
  memset(w, 0, sizeof *w);
  tokend_rckm_init(&w->r);
  w->n = n;
  w->in[0] = (struct tokend_pin){.request = 0.5, .limit = 1.0, .slo = 1, .llm = llm};
  w->in[1] = (struct tokend_pin){.request = 0.2, .limit = 0.4};
  w->in[2] = (struct tokend_pin){.request = 0.3, .limit = 0.6};
}

/* `k` windows with the high client busy or idle and the low clients pending or not. */
static void run(struct world *w, int k, int high_busy, int low_busy) {
  for (int i = 0; i < k; i++) {
    w->in[0].used_ns = high_busy ? MS : 0;
    w->in[0].launches = high_busy ? 3 : 0;
    for (size_t j = 1; j < w->n; j++) w->in[j].blocked = low_busy, w->in[j].used_ns = low_busy ? MS : 0;
    w->state = tokend_plan_rckm(&P, &w->r, w->n, w->in, w->st, w->grant);
  }
}

/* One KLC of `len` busy windows followed by one idle window (which ends it). */
static void cycle(struct world *w, int len) { run(w, len, 1, 1); run(w, 1, 0, 1); }

static double frac(uint64_t g) { return (double)g / (double)CAP; }

int main(void) {
  struct world w;

  init(&w, 3, 0);
  near("C starts at CONSERVATIVE_LIMIT / UPPER_LIMIT", w.r.c, 0.1);
  cycle(&w, 5);
  check(w.st[0].klc_min == 0, "a KLC of 5 windows (<= 6) sets no minKLC", w.st[0].klc_min, 0);
  cycle(&w, 8);
  check(w.st[0].klc_min == 8, "the first KLC over 6 windows is minKLC", w.st[0].klc_min, 8);
  /* 2 KLCs ended, the 2nd at history position 2: RECOVERY only on every 5th */
  near("o = 1 on a non-5th cycle: C kept", w.r.c, 0.1);
  cycle(&w, 8), cycle(&w, 8);
  check(w.state == TOKEND_ST_CONTENTION, "o = 1, 4th cycle: CONTENTION", w.state, TOKEND_ST_CONTENTION);
  cycle(&w, 8);
  check(w.state == TOKEND_ST_RECOVERY, "o = 1, 5th cycle: RECOVERY", w.state, TOKEND_ST_RECOVERY);
  near("RECOVERY: C = min(UPPER, 1.3 C)", w.r.c, 0.13);
  for (int i = 0; i < 5; i++) cycle(&w, 9); /* o = 9/8 < 1.2 */
  near("five more cycles at o = 1.125: one more RECOVERY", w.r.c, 0.169);
  cycle(&w, 12); /* o = 1.5: between 1.2 and 1.6 */
  check(w.state == TOKEND_ST_CONTENTION, "o = 1.5: CONTENTION", w.state, TOKEND_ST_CONTENTION);
  near("CONTENTION: C kept", w.r.c, 0.169);
  cycle(&w, 16); /* o = 2 */
  check(w.state == TOKEND_ST_EMERGENCY, "o = 2: EMERGENCY", w.state, TOKEND_ST_EMERGENCY);
  near("EMERGENCY: C = max(0.01 UPPER sum(request_low), C / o) = C / 2", w.r.c, 0.0845);
  cycle(&w, 40); /* o = 5 >= 4: not an EMERGENCY */
  check(w.state == TOKEND_ST_CONTENTION, "o = 5 (>= 4): CONTENTION", w.state, TOKEND_ST_CONTENTION);
  near("o >= 4: C kept", w.r.c, 0.0845);
  for (int i = 0; i < 4; i++) cycle(&w, 24); /* o = 3 each: C / 3 four times, floored */
  near("EMERGENCY floor: C = 0.01 * sum(request_low) = 0.005", w.r.c, 0.005);

  /* grants while the high client is active: low clients get C * request_i, the high its request
   * (low work pending) */
  run(&w, 1, 1, 1);
  near("high client, low work pending: request", frac(w.grant[0]), 0.5);
  near("low client 1: C * request_1", frac(w.grant[1]), 0.005 * 0.2);
  near("low client 2: C * request_2", frac(w.grant[2]), 0.005 * 0.3);
  run(&w, 1, 1, 0);
  near("high client, no low work pending, no other high: limit", frac(w.grant[0]), 1.0);

  /* idle high client: L kept between 100 and 120 idle windows, C = UPPER after 120 */
  run(&w, 110, 0, 1);
  near("110 idle windows: L kept (C * sum(request_low))", w.r.low_total, 0.005 * 0.5);
  run(&w, 11, 0, 1);
  near("over 120 idle windows: C = UPPER", w.r.c, 1.0);
  near("L = UPPER * sum(limit_low)", w.r.low_total, 1.0);
  near("low client 1: L * request_1 / sum(request_low)", frac(w.grant[1]), 1.0 * 0.2 / 0.5);
  run(&w, 1, 1, 1);
  near("the high client back: L = C * sum(request_low)", w.r.low_total, 0.5);

  /* a second high client busy: the first gets only its request */
  init(&w, 2, 0);
  w.in[1] = (struct tokend_pin){.request = 0.3, .limit = 0.6, .slo = 1};
  w.in[1].used_ns = MS;
  w.in[0].used_ns = MS;
  w.state = tokend_plan_rckm(&P, &w.r, 2, w.in, w.st, w.grant);
  near("another high client active: request", frac(w.grant[0]), 0.5);
  w.in[1].used_ns = 0;
  for (int i = 0; i < 11; i++) tokend_plan_rckm(&P, &w.r, 2, w.in, w.st, w.grant);
  near("the other high client idle > 10 windows: limit", frac(w.grant[0]), 1.0);

  /* high client exit */
  init(&w, 3, 0);
  tokend_rckm_high_exit(&w.r, 0.3, 1.0);
  near("high exit: C = (1 - sum(request_high of the rest)) UPPER", w.r.c, 0.7);
  near("high exit: L = C sum(limit_low)", w.r.low_total, 0.7);

  /* LLM: minKLC = shortest of the last 20 (at least 2), EMERGENCY from o >= 1.3 */
  init(&w, 3, 1);
  cycle(&w, 10);
  cycle(&w, 14); /* o = 14 / 10 = 1.4 */
  check(w.state == TOKEND_ST_EMERGENCY, "LLM, o = 1.4: EMERGENCY", w.state, TOKEND_ST_EMERGENCY);
  near("LLM EMERGENCY: C / o", w.r.c, 0.1 / 1.4);
  init(&w, 3, 0);
  cycle(&w, 10);
  cycle(&w, 14);
  check(w.state == TOKEND_ST_CONTENTION, "non-LLM, o = 1.4: CONTENTION", w.state, TOKEND_ST_CONTENTION);

  printf("%d of %d failed\n", failed, total);
  return failed != 0;
}
