/* Table-driven tests of tokend_plan (pure: no clock, no sockets).
 * Capacity 20 ms per window; numbers in ms for readability. */
#include <stdio.h>
#include <string.h>

#include "tokend.h"

#define MS 1000000ull
#define C (20 * MS)

struct tcase {
  const char *name;
  size_t n;
  struct tokend_pin in[4];
  struct tokend_pstate st[4];   /* state before the window */
  uint64_t want[4];             /* grants, ns */
  int want_state;               /* device state */
  uint64_t tol;                 /* ns */
};

static const struct tokend_params P = {C, 0.5, 1.2, 0.25, C / 50};

static const struct tcase cases[] = {
  {"two busy clients get their limits 0.3/0.7", 2,
   {{.request = 0.3, .limit = 0.3, .blocked = 1, .used_ns = 6 * MS, .launches = 6},
    {.request = 0.7, .limit = 0.7, .blocked = 1, .used_ns = 14 * MS, .launches = 14}},
   {{.rw_pos = 0}}, {6 * MS, 14 * MS}, TOKEND_ST_NONE, 1},
  {"work-conserving: an idle neighbour leaves its share to a busy one", 2,
   {{.request = 0.3, .limit = 1.0, .blocked = 1, .used_ns = 6 * MS, .launches = 6},
    {.request = 0.7, .limit = 1.0, .used_ns = 0}},
   {{.rw_pos = 0}}, {C - C / 50, C / 50}, TOKEND_ST_NONE, 1},
  {"limit caps a busy client even with spare capacity", 2,
   {{.request = 0.1, .limit = 0.4, .blocked = 1, .used_ns = 8 * MS},
    {.request = 0.1, .limit = 0.4, .used_ns = 1 * MS}},
   {{.rw_pos = 0}}, {8 * MS, (uint64_t)(1.25 * MS) + C / 50}, TOKEND_ST_NONE, 1},
  {"oversubscribed requests are scaled down together", 2,
   {{.request = 0.8, .limit = 1.0, .blocked = 1, .used_ns = 16 * MS},
    {.request = 0.8, .limit = 1.0, .blocked = 1, .used_ns = 16 * MS}},
   {{.rw_pos = 0}}, {C / 2, C / 2}, TOKEND_ST_NONE, 2},
  {"spare capacity goes to the larger deficit first", 3,
   {{.request = 0.2, .limit = 1.0, .blocked = 1, .used_ns = 4 * MS},
    {.request = 0.2, .limit = 1.0, .blocked = 1, .used_ns = 4 * MS},
    {.request = 0.6, .limit = 0.6, .used_ns = 0}},
   {{.deficit_ns = 0}, {.deficit_ns = 5 * MS}, {.rw_pos = 0}},
   {4 * MS, 4 * MS + (C - 8 * MS - C / 50), C / 50}, TOKEND_ST_NONE, 1},
  /* Dilu Algorithm 2 */
  {"SLO client's KLC doubles: EMERGENCY, it gets its limit, the other shrinks", 2,
   {{.request = 0.5, .limit = 1.0, .slo = 1, .blocked = 1, .used_ns = 10 * MS, .launches = 10, .klc_ns = 2 * MS},
    {.request = 0.5, .limit = 1.0, .blocked = 1, .used_ns = 10 * MS, .launches = 10}},
   {{.klc_min_ns = 1 * MS, .last_grant_ns = 10 * MS, .rw = {10}}, {.last_grant_ns = 10 * MS, .rw = {10}}},
   {C, 0}, TOKEND_ST_EMERGENCY, 1},
  {"SLO client idle in RW: RECOVERY at its request", 2,
   {{.request = 0.5, .limit = 1.0, .slo = 1, .used_ns = 0},
    {.request = 0.5, .limit = 1.0, .blocked = 1, .used_ns = 10 * MS, .launches = 10}},
   {{.klc_min_ns = 1 * MS, .last_grant_ns = 10 * MS}, {.last_grant_ns = 10 * MS, .rw = {10}}},
   {10 * MS, 10 * MS}, TOKEND_ST_RECOVERY, 1},
  {"others idle: SLO client grows by eta_increase", 2,
   {{.request = 0.5, .limit = 1.0, .slo = 1, .blocked = 1, .used_ns = 10 * MS, .launches = 10, .klc_ns = 1 * MS},
    {.request = 0.2, .limit = 1.0, .used_ns = 0}},
   {{.klc_min_ns = 1 * MS, .last_grant_ns = 10 * MS, .rw = {10}}, {.rw_pos = 0}},
   {12 * MS, C / 50}, TOKEND_ST_RECOVERY, 1},
  {"CONTENTION: a best-effort client keeps at least its request, and takes what is unclaimed", 2,
   {{.request = 0.4, .limit = 0.9, .slo = 1, .blocked = 1, .used_ns = 8 * MS, .launches = 8, .klc_ns = 1 * MS},
    {.request = 0.2, .limit = 0.9, .blocked = 1, .used_ns = 1 * MS, .launches = 1}},
   {{.klc_min_ns = 1 * MS, .last_grant_ns = 8 * MS, .rw = {8}}, {.last_grant_ns = 1 * MS, .rw = {1}}},
   {8 * MS, 12 * MS}, TOKEND_ST_CONTENTION, 1},
  {"both busy, KLC steady: CONTENTION, SLO at request, other keeps last", 2,
   {{.request = 0.6, .limit = 1.0, .slo = 1, .blocked = 1, .used_ns = 12 * MS, .launches = 12, .klc_ns = 1 * MS},
    {.request = 0.2, .limit = 1.0, .blocked = 1, .used_ns = 8 * MS, .launches = 8}},
   {{.klc_min_ns = 1 * MS, .last_grant_ns = 12 * MS, .rw = {12}}, {.last_grant_ns = 8 * MS, .rw = {8}}},
   {12 * MS, 8 * MS}, TOKEND_ST_CONTENTION, 1},
};

static uint64_t diff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

int main(void) {
  int failed = 0;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const struct tcase *t = &cases[k];
    struct tokend_pstate st[4];
    uint64_t grant[4] = {0}, sum = 0;
    memcpy(st, t->st, sizeof st);
    int state = tokend_plan(&P, t->n, t->in, st, grant);
    int ok = state == t->want_state;
    for (size_t i = 0; i < t->n; i++) {
      ok = ok && diff(grant[i], t->want[i]) <= t->tol * MS / 1000 + 1;
      sum += grant[i];
    }
    ok = ok && sum <= C;
    printf("%s %s: state=%s grants(ms)=", ok ? "ok  " : "FAIL", t->name, tokend_state_name(state));
    for (size_t i = 0; i < t->n; i++) printf("%s%.3f", i ? "," : "", (double)grant[i] / MS);
    if (!ok) {
      printf(" want state=%s grants=", tokend_state_name(t->want_state));
      for (size_t i = 0; i < t->n; i++) printf("%s%.3f", i ? "," : "", (double)t->want[i] / MS);
    }
    putchar('\n');
    failed += !ok;
  }
  printf("%d of %zu failed\n", failed, sizeof cases / sizeof cases[0]);
  return failed != 0;
}
