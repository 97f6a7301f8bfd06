/* The control socket: one JSON object per line, one JSON reply per line.
 *
 *  {"op":"SET_QUOTA","pid":123,"device":"gpu0","request":0.3,"limit":0.5}
 *      key: one of "pid", "clientId", "cgroup" (prefix); device "cpu", "gpuN"
 *      or N. Takes effect at the next grant; a lowered limit is also pushed
 *      at once (REVOKE). Reply: {"ok":true,"applied":<clients>,"monoNs":<t>}
 *  {"op":"REMOVE","pid":123,"device":"gpu0"}   -> {"ok":true,"removed":<rules>}
 *  {"op":"STATS"}                               -> {"ok":true,"clients":[...],...}
 * Errors: {"ok":false,"error":"<field>: <why>"}.
 * The parser reads flat objects with string and number values only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokend.h"

/* Find "key": and return a pointer to the value, or NULL. */
static const char *json_val(const char *s, const char *key) {
  char pat[48];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *p = strstr(s, pat);
  if (!p) return NULL;
  p += strlen(pat);
  while (*p == ' ' || *p == '\t') p++;
  if (*p != ':') return NULL;
  p++;
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

static int json_str(const char *s, const char *key, char *out, size_t outlen) {
  const char *p = json_val(s, key);
  if (!p || *p != '"') return -1;
  const char *e = strchr(p + 1, '"');
  if (!e || (size_t)(e - p - 1) >= outlen) return -1;
  memcpy(out, p + 1, (size_t)(e - p - 1));
  out[e - p - 1] = 0;
  return 0;
}

static int json_num(const char *s, const char *key, double *out) {
  const char *p = json_val(s, key);
  if (!p) return -1;
  char *end;
  *out = strtod(p, &end);
  return end == p ? -1 : 0;
}

static int parse_device(const char *line, uint32_t *dev) {
  char buf[16];
  double n;
  *dev = 0;
  if (json_str(line, "device", buf, sizeof buf) == 0) {
    if (strcmp(buf, "cpu") == 0) { *dev = TOKEND_DEVICE_CPU; return 0; }
    if (strncmp(buf, "gpu", 3) == 0 && buf[3] >= '0' && buf[3] <= '9') { *dev = (uint32_t)atoi(buf + 3); return 0; }
    return -1;
  }
  if (json_num(line, "device", &n) == 0) { *dev = (uint32_t)n; return 0; }
  return 0; /* absent: gpu0 */
}

static int parse_key(const char *line, struct tokend_rule *r, char *err, size_t errlen) {
  double v;
  if (json_num(line, "pid", &v) == 0) r->pid = (int32_t)v;
  if (json_num(line, "clientId", &v) == 0) r->client_id = (uint64_t)v;
  json_str(line, "cgroup", r->cgroup, sizeof r->cgroup);
  if (!r->pid && !r->client_id && !r->cgroup[0]) { snprintf(err, errlen, "pid|clientId|cgroup: one is required"); return -1; }
  if (parse_device(line, &r->device) != 0) { snprintf(err, errlen, "device: want \"cpu\", \"gpuN\" or N"); return -1; }
  return 0;
}

static int same_key(const struct tokend_rule *a, const struct tokend_rule *b) {
  return a->used && a->pid == b->pid && a->client_id == b->client_id && a->device == b->device &&
         strcmp(a->cgroup, b->cgroup) == 0;
}

static int reapply(struct tokend *d, uint64_t now) {
  int applied = 0;
  for (int i = 0; i < TOKEND_MAX_CLIENTS; i++) {
    struct tokend_client *c = &d->clients[i];
    if (!c->used || !c->hello) continue;
    double old_limit = c->limit, old_request = c->request;
    tokend_resolve_quota(d, c);
    if (c->limit == old_limit && c->request == old_request) continue;
    applied++;
    if (c->limit < old_limit) { /* push the lower cap now: what is left of this window at the new limit */
      const struct tokend_params *p = tokend_params_for(d, c->device);
      uint64_t end = d->window_start_ns + d->window_ns, left = end > now ? end - now : 0;
      uint64_t cap = (uint64_t)(c->limit * (double)p->capacity_ns * (double)left / (double)d->window_ns);
      tokend_send(c, TOKEND_REVOKE, cap, d->window_ns, d->window_seq, 0);
    }
  }
  return applied;
}

static void stats(struct tokend *d, char *out, size_t outlen) {
  size_t o = (size_t)snprintf(out, outlen, "{\"ok\":true,\"windowNs\":%llu,\"windowSeq\":%llu,\"gpus\":%u,\"clients\":[",
                              (unsigned long long)d->window_ns, (unsigned long long)d->window_seq, d->gpus);
  int first = 1;
  for (int i = 0; i < TOKEND_MAX_CLIENTS && o < outlen; i++) {
    const struct tokend_client *c = &d->clients[i];
    if (!c->used || !c->hello) continue;
    char dev[16], cg[128];
    size_t k = 0;
    for (const char *s = c->cgroup; *s && k < sizeof cg - 1; s++) cg[k++] = (*s == '"' || *s == '\\') ? '_' : *s;
    cg[k] = 0;
    if (c->device == TOKEND_DEVICE_CPU) snprintf(dev, sizeof dev, "cpu");
    else snprintf(dev, sizeof dev, "gpu%u", c->device);
    o += (size_t)snprintf(out + o, outlen - o,
                          "%s{\"id\":%llu,\"pid\":%d,\"uid\":%d,\"cgroup\":\"%s\",\"device\":\"%s\",\"slo\":%s,"
                          "\"request\":%g,\"limit\":%g,\"smShare\":%g,\"state\":\"%s\",\"lastGrantNs\":%llu,\"grantedNs\":%llu,"
                          "\"usedNs\":%llu,\"launches\":%llu}",
                          first ? "" : ",", (unsigned long long)c->id, (int)c->pid, (int)c->uid, cg, dev,
                          c->slo ? "true" : "false", c->request, c->limit, c->sm_share > 0 ? c->sm_share : 1,
                          tokend_state_name(c->ps.state),
                          (unsigned long long)c->ps.last_grant_ns, (unsigned long long)c->total_granted_ns,
                          (unsigned long long)c->total_used_ns, (unsigned long long)c->total_launches);
    first = 0;
  }
  if (o < outlen) o += (size_t)snprintf(out + o, outlen - o, "],\"policy\":\"%s\"", d->policy == TOKEND_POLICY_DILU ? "dilu" : "default");
  /* RCKM: C and L per device (fractions of the device), GPUs then the CPU */
  for (unsigned g = 0; d->policy == TOKEND_POLICY_DILU && g <= d->gpus && o < outlen; g++) {
    const struct tokend_rckm *r = &d->rckm[g == d->gpus ? TOKEND_MAX_GPUS : g];
    char dev[16];
    if (g == d->gpus) snprintf(dev, sizeof dev, "cpu");
    else snprintf(dev, sizeof dev, "gpu%u", g);
    o += (size_t)snprintf(out + o, outlen - o, "%s{\"device\":\"%s\",\"c\":%g,\"low\":%g,\"cycles\":%llu}",
                          g ? "," : ",\"rckm\":[", dev, r->c, r->low_total, (unsigned long long)r->cycles);
    if (g == d->gpus && o < outlen) o += (size_t)snprintf(out + o, outlen - o, "]");
  }
  if (o < outlen) snprintf(out + o, outlen - o, "}");
}

void tokend_control_line(struct tokend *d, const char *line, char *out, size_t outlen, uint64_t now) {
  char op[32], err[160];
  struct tokend_rule key = {0};
  double request, limit;
  if (json_str(line, "op", op, sizeof op) != 0) { snprintf(err, sizeof err, "op: missing"); goto err; }
  if (strcmp(op, "STATS") == 0) { stats(d, out, outlen); return; }
  if (strcmp(op, "SET_QUOTA") == 0) {
    if (parse_key(line, &key, err, sizeof err) != 0) goto err;
    if (json_num(line, "limit", &limit) != 0 || limit <= 0 || limit > 1) { snprintf(err, sizeof err, "limit: want a number in (0, 1]"); goto err; }
    if (json_num(line, "request", &request) != 0) request = 0;
    if (request < 0 || request > limit) { snprintf(err, sizeof err, "request: want 0 <= request <= limit"); goto err; }
    struct tokend_rule *slot = NULL;
    for (int i = 0; i < TOKEND_MAX_RULES && !slot; i++)
      if (same_key(&d->rules[i], &key)) slot = &d->rules[i];
    for (int i = 0; i < TOKEND_MAX_RULES && !slot; i++)
      if (!d->rules[i].used) slot = &d->rules[i];
    if (!slot) { snprintf(err, sizeof err, "rules: table full (%d)", TOKEND_MAX_RULES); goto err; }
    *slot = key;
    slot->used = 1;
    slot->request = request;
    slot->limit = limit;
    double llm = 0;
    slot->llm = json_num(line, "llm", &llm) == 0 && llm != 0; /* RCKM: an LLM client (number, 1 = yes) */
    int applied = reapply(d, now);
    snprintf(out, outlen, "{\"ok\":true,\"applied\":%d,\"monoNs\":%llu}", applied, (unsigned long long)now);
    return;
  }
  if (strcmp(op, "REMOVE") == 0) {
    if (parse_key(line, &key, err, sizeof err) != 0) goto err;
    key.used = 1;
    int removed = 0;
    for (int i = 0; i < TOKEND_MAX_RULES; i++)
      if (same_key(&d->rules[i], &key)) { d->rules[i] = (struct tokend_rule){0}; removed++; }
    reapply(d, now);
    snprintf(out, outlen, "{\"ok\":true,\"removed\":%d,\"monoNs\":%llu}", removed, (unsigned long long)now);
    return;
  }
  snprintf(err, sizeof err, "op: unknown \"%.20s\"", op);
err:
  snprintf(out, outlen, "{\"ok\":false,\"error\":\"%s\"}", err);
}
