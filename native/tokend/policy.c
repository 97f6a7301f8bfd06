/* The window plan: pure arithmetic on reported use and quotas.
 *
 * 1. A target per client.
 *    Non-SLO clients with no SLO client on the device: their demand
 *    (blocked: limit; else used * (1 + headroom) + floor, capped at limit).
 *    SLO-sensitive clients: Dilu Algorithm 2 lines 11-21 —
 *      dT = (KLC - KLC_min) / KLC_min
 *      dT > eta_violation        -> EMERGENCY, limit
 *      no launches in RW         -> RECOVERY,  request
 *      others idle in RW         -> RECOVERY,  min(last * eta_increase, limit)
 *      otherwise                 -> CONTENTION, request
 *    Non-SLO clients next to SLO ones follow the device state (lines 23-31):
 *      EMERGENCY  -> min(request, last) / max(dT, 1)
 *      RECOVERY   -> min(last * eta_increase, limit), at least request
 *      CONTENTION -> last, at least request
 *    (always capped at the client's demand when it is not blocked, so an idle
 *    client never holds capacity that others asked for.)
 * 2. Guarantees: min(target, request) each, scaled down together if the
 *    requests oversubscribe the device; during an EMERGENCY only the SLO
 *    clients in EMERGENCY keep a guarantee (the others are resized down).
 * 3. The rest of the capacity, EMERGENCY SLO clients first, then largest
 *    deficit first, up to each target; then, except in an EMERGENCY, to
 *    non-SLO clients that ran dry, up to their limit (work conservation).
 * 4. Deficit: a client that ran dry is owed (fair share - grant); otherwise the
 *    debt halves each window. Bounded by +-capacity.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "tokend.h"

static uint64_t frac(double f, uint64_t c) { return f <= 0 ? 0 : f >= 1 ? c : (uint64_t)(f * (double)c); }
static uint64_t min_u(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u(uint64_t a, uint64_t b) { return a > b ? a : b; }

static uint64_t rw_sum(const struct tokend_pstate *s) {
  uint64_t t = 0;
  for (int i = 0; i < TOKEND_RW; i++) t += s->rw[i];
  return t;
}

const char *tokend_state_name(int state) {
  switch (state) {
    case TOKEND_ST_CONTENTION: return "CONTENTION";
    case TOKEND_ST_RECOVERY: return "RECOVERY";
    case TOKEND_ST_EMERGENCY: return "EMERGENCY";
    default: return "NONE";
  }
}

static uint64_t demand_of(const struct tokend_params *p, const struct tokend_pin *in) {
  uint64_t lim = frac(in->limit, p->capacity_ns);
  if (in->blocked) return lim;
  uint64_t d = (uint64_t)((double)in->used_ns * (1.0 + p->headroom)) + p->floor_ns;
  return min_u(d, lim);
}

static int slo_target(const struct tokend_params *p, size_t n, size_t i, const struct tokend_pin *in,
                      struct tokend_pstate *st, uint64_t *tgt) {
  struct tokend_pstate *s = &st[i];
  uint64_t C = p->capacity_ns, klc = in[i].klc_ns;
  if (klc && (!s->klc_min_ns || klc < s->klc_min_ns)) s->klc_min_ns = klc;
  s->delta_t = klc && s->klc_min_ns ? (double)(klc - s->klc_min_ns) / (double)s->klc_min_ns : 0;
  uint64_t others = 0;
  for (size_t j = 0; j < n; j++)
    if (j != i) others += rw_sum(&st[j]);
  if (s->delta_t > p->eta_violation) {
    *tgt = frac(in[i].limit, C);
    return TOKEND_ST_EMERGENCY;
  }
  if (rw_sum(s) == 0) {
    *tgt = frac(in[i].request, C);
    return TOKEND_ST_RECOVERY;
  }
  if (others == 0) {
    uint64_t last = max_u(s->last_grant_ns, p->floor_ns);
    *tgt = min_u((uint64_t)((double)last * p->eta_increase), frac(in[i].limit, C));
    return TOKEND_ST_RECOVERY;
  }
  *tgt = frac(in[i].request, C);
  return TOKEND_ST_CONTENTION;
}

static uint64_t follower_target(const struct tokend_params *p, int dev_state, double dt,
                                const struct tokend_pin *in, const struct tokend_pstate *s) {
  uint64_t C = p->capacity_ns, req = frac(in->request, C), lim = frac(in->limit, C);
  uint64_t last = s->last_grant_ns ? s->last_grant_ns : req;
  switch (dev_state) {
    case TOKEND_ST_EMERGENCY: return (uint64_t)((double)min_u(req, last) / (dt > 1 ? dt : 1));
    /* outside an EMERGENCY the request stays guaranteed */
    case TOKEND_ST_RECOVERY: return max_u(min_u((uint64_t)((double)max_u(last, p->floor_ns) * p->eta_increase), lim), req);
    case TOKEND_ST_CONTENTION: return max_u(last, req);
    default: return demand_of(p, in);
  }
}

struct order_ctx { const struct tokend_pstate *st; const int *first; };

/* SLO clients in EMERGENCY first, then the largest deficit */
static int by_priority(const void *a, const void *b, void *ctx) {
  const struct order_ctx *o = ctx;
  size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
  if (o->first[ia] != o->first[ib]) return o->first[ia] ? -1 : 1;
  int64_t da = o->st[ia].deficit_ns, db = o->st[ib].deficit_ns;
  if (da != db) return da > db ? -1 : 1;
  return *(const size_t *)a < *(const size_t *)b ? -1 : 1; /* stable by index */
}

int tokend_plan(const struct tokend_params *p, size_t n, const struct tokend_pin *in,
                struct tokend_pstate *st, uint64_t *grant) {
  uint64_t C = p->capacity_ns, tgt[TOKEND_MAX_CLIENTS], gsum = 0;
  size_t order[TOKEND_MAX_CLIENTS];
  int first[TOKEND_MAX_CLIENTS];
  int dev_state = TOKEND_ST_NONE;
  double dt_max = 0, wsum = 0;
  if (n > TOKEND_MAX_CLIENTS) n = TOKEND_MAX_CLIENTS;

  for (size_t i = 0; i < n; i++) { /* shift each rate window (Algorithm 2 line 11) */
    st[i].rw[st[i].rw_pos] = in[i].launches;
    st[i].rw_pos = (st[i].rw_pos + 1) % TOKEND_RW;
  }
  for (size_t i = 0; i < n; i++) {
    if (!in[i].slo) continue;
    st[i].state = slo_target(p, n, i, in, st, &tgt[i]);
    if (st[i].state > dev_state) dev_state = st[i].state;
    if (st[i].state == TOKEND_ST_EMERGENCY && st[i].delta_t > dt_max) dt_max = st[i].delta_t;
  }
  for (size_t i = 0; i < n; i++) {
    if (in[i].slo) continue;
    tgt[i] = follower_target(p, dev_state, dt_max, &in[i], &st[i]);
    if (!in[i].blocked) tgt[i] = min_u(tgt[i], demand_of(p, &in[i]));
    st[i].state = dev_state;
  }
  for (size_t i = 0; i < n; i++) { /* guarantees; in EMERGENCY the SLO clients' come first */
    first[i] = in[i].slo && st[i].state == TOKEND_ST_EMERGENCY;
    grant[i] = dev_state == TOKEND_ST_EMERGENCY && !first[i] ? 0 : min_u(tgt[i], frac(in[i].request, C));
    gsum += grant[i];
    order[i] = i;
    wsum += in[i].request > 0 ? in[i].request : 0.01;
  }
  if (gsum > C) { /* oversubscribed requests: scale down together */
    uint64_t s2 = 0;
    for (size_t i = 0; i < n; i++) s2 += grant[i] = (uint64_t)((double)grant[i] * (double)C / (double)gsum);
    gsum = s2;
  }
  struct order_ctx oc = {st, first};
  qsort_r(order, n, sizeof order[0], by_priority, &oc);
  uint64_t rest = C - gsum;
  for (size_t k = 0; k < n && rest; k++) {
    size_t i = order[k];
    uint64_t extra = tgt[i] > grant[i] ? min_u(tgt[i] - grant[i], rest) : 0;
    grant[i] += extra;
    rest -= extra;
  }
  /* work conservation: what no target claimed goes to non-SLO clients that ran
   * dry, up to their limit, except during an EMERGENCY (the SLO client is being
   * protected). SLO clients follow Algorithm 2 exactly (RECOVERY ramps by
   * eta_increase); mid-window top-ups (tokend.c) still serve them from spare. */
  for (size_t k = 0; k < n && rest && dev_state != TOKEND_ST_EMERGENCY; k++) {
    size_t i = order[k];
    uint64_t d = demand_of(p, &in[i]);
    uint64_t extra = !in[i].slo && in[i].blocked && d > grant[i] ? min_u(d - grant[i], rest) : 0;
    grant[i] += extra;
    rest -= extra;
  }
  for (size_t i = 0; i < n; i++) {
    double w = in[i].request > 0 ? in[i].request : 0.01;
    int64_t fair = (int64_t)((double)C * w / wsum);
    if (in[i].blocked) st[i].deficit_ns += fair - (int64_t)grant[i];
    else st[i].deficit_ns /= 2;
    if (st[i].deficit_ns > (int64_t)C) st[i].deficit_ns = (int64_t)C;
    if (st[i].deficit_ns < -(int64_t)C) st[i].deficit_ns = -(int64_t)C;
    st[i].last_grant_ns = grant[i];
  }
  return dev_state;
}
