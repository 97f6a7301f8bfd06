/** sloModel 'shared': the function's replicas as one queue — fleet statistics, the copy search and the cheapest covering configuration. */
import { sharedQueueLatencyMs, sharedQueueRate } from './queueing';
import { CAND_W, EPS, HybridParams } from './hybrid-params';
import { Shared, CapabilityTables, Tables } from './hybrid-tables';
import type { Capability } from './types';

/**
 * sloModel 'shared': the function's replicas as ONE queue (sharedQueueLatencyMs). A member counts
 * when one full batch fits the SLO (capOf > 0: its full-batch rate); the fleet's statistics are
 * the count n, the total rate mu and the slowest batch latency lmax.
 */
export interface Member {
  batchSize: number;
  smShare: number;
  quota: number;
}

export interface Fleet {
  n: number;
  mu: number;
  /** Total rate with batches of one (what a lightly loaded replica runs). */
  mu1: number;
  lmax: number;
}

export interface Candidate {
  smShare: number;
  quota: number;
  batchSize: number;
  cap: number;
  cap1: number;
  lat: number;
  cost: number;
}

/**
 * Candidates (s, q, b, cap, cap1, lat, cost) packed CAND_W numbers apiece in one growable
 * Float64Array (no object per candidate). `grow` appends at least one more, or answers false
 * when the list is complete: the full table's list is built lazily, one cost group at a time, as
 * far as `cheapestCover` walks it (it stops at the first cost no cheaper than its best total).
 */
export class CandidateList {
  d = new Float64Array(CAND_W * 16);
  n = 0;
  constructor(public grow: () => boolean = () => false) {}
  push(s: number, q: number, b: number, c: number, c1: number, lat: number, cost: number): void {
    let o = this.n * CAND_W;
    if (o + CAND_W > this.d.length) {
      const d = new Float64Array(this.d.length * 2);
      d.set(this.d);
      this.d = d;
    }
    const d = this.d;
    d[o++] = s;
    d[o++] = q;
    d[o++] = b;
    d[o++] = c;
    d[o++] = c1;
    d[o++] = lat;
    d[o] = cost;
    this.n++;
  }
  at(i: number): Candidate {
    const d = this.d;
    const o = i * CAND_W;
    return { smShare: d[o], quota: d[o + 1], batchSize: d[o + 2], cap: d[o + 3], cap1: d[o + 4], lat: d[o + 5], cost: d[o + 6] };
  }
  /** Builds the whole list (the cache-off reference). */
  complete(): this {
    while (this.grow());
    return this;
  }
}

/**
 * Does fleet f plus m copies of a member of rate c (c1 with batches of one) fit T, the fleet's
 * slowest batch then being lmax? (sharedQueueLatencyMs without a Fleet object per probe; a
 * module-level function, not a closure per call: the copy search probes it per candidate.)
 */
function fitsWith(x: CapabilityTables, f: Fleet, m: number, c: number, c1: number, lmax: number, T: number): boolean {
  return T <= 0 || (f.n + m > 0 && sharedQueueLatencyMs(x.pct, f.n + m, f.mu + m * c, lmax, T, f.mu1 + m * c1) <= x.budget);
}

export function makeFleet(p: HybridParams, cap: Capability, quotaLevels: number[], shared: boolean, t: Tables) {
  const { worstLatency, capOf, groupsOf, rate1 } = t;
  const fleetOf = (x: CapabilityTables, xs: Member[], skip?: Member): Fleet => {
    let n = 0;
    let mu = 0;
    let mu1 = 0;
    let lmax = 0;
    for (const m of xs) {
      if (m === skip) continue;
      const c = capOf(x, m.batchSize, m.smShare, m.quota);
      if (c > 0) {
        n++;
        mu += c;
        mu1 += Math.min(c, rate1(x, m.smShare, m.quota));
        const l = worstLatency(x, m.batchSize, m.smShare, m.quota);
        if (l > lmax) lmax = l;
      }
    }
    return { n, mu, mu1, lmax };
  };
  /** Does the fleet meet the SLO at the function's percentile for arrival rate T? */
  const fits = (x: CapabilityTables, f: Fleet, T: number): boolean =>
    T <= 0 || (f.n > 0 && sharedQueueLatencyMs(x.pct, f.n, f.mu, f.lmax, T, f.mu1) <= x.budget);
  /** The fleet's SLO capability: the largest rate it serves within the SLO (req/s). */
  const fleetCap = (x: CapabilityTables, f: Fleet): number => sharedQueueRate(x.pct, f.n, f.mu, f.lmax, x.budget, 30, f.mu1);
  /** Fewest copies (≤ mMax) of a member of rate c (c1 with batches of one) and batch latency lat that make fleet f fit T; Infinity if none. */
  const copiesFor = (x: CapabilityTables, f: Fleet, c: number, c1: number, lat: number, T: number, mMax: number): number => {
    const lmax = Math.max(f.lmax, lat);
    let lo = Math.max(1, Math.floor((T - f.mu) / c) + 1);
    if (lo > mMax) return Infinity;
    // gallop from the throughput bound (the answer is usually within a few copies of it), then bisect
    let step = 1;
    let hi = lo;
    while (!fitsWith(x, f, hi, c, c1, lmax, T)) {
      if (hi >= mMax) return Infinity;
      lo = hi + 1;
      hi = Math.min(mMax, hi + step);
      step *= 2;
    }
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (fitsWith(x, f, mid, c, c1, lmax, T)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  const pushCands = (x: CapabilityTables, out: CandidateList, s: number, q: number): void => {
    for (const b of x.batches) {
      const c = capOf(x, b, s, q);
      if (c > 0) out.push(s, q, b, c, Math.min(c, rate1(x, s, q)), worstLatency(x, b, s, q), s * q);
    }
  };
  /** Every (s, q, b) of the table with a batch fitting the SLO, in ascending cost s·q (lazily, cached per profile). */
  const candsMemo = new WeakMap<Shared, CandidateList>();
  const candidatesOf = (x: CapabilityTables): CandidateList => {
    let cs = x.shared && candsMemo.get(x.shared);
    if (cs) return cs;
    const groups = groupsOf(x.smGrid);
    let g = 0;
    const list: CandidateList = new CandidateList((): boolean => {
      const n0 = list.n;
      while (list.n === n0 && g < groups.length) {
        for (const i of groups[g]) pushCands(x, list, x.smGrid[Math.floor(i / quotaLevels.length)], quotaLevels[i % quotaLevels.length]);
        g++;
      }
      return list.n > n0;
    });
    if (x.shared) candsMemo.set(x.shared, list);
    else list.complete();
    return list;
  };
  /**
   * The candidates a used GPU offers a new replica (its SM options, each up to its free quota), in
   * ascending cost, the most capable first on equal cost, then in option, quota, batch order (what a
   * stable sort of the options' candidates by cost, then capability, gives). A pure function of the
   * profile and of the options' (SM share, number of quota levels that fit) — memoised per profile
   * on that shape. When every option's SM share is on the profile's SM grid the list is built
   * lazily, one cost group of the table at a time (so only its cheap end is computed); otherwise
   * eagerly (cache off: always eagerly, the reference).
   */
  const onGpuMemo = new WeakMap<Shared, Map<string, CandidateList>>();
  const onGpuCandidates = (x: CapabilityTables, opts: Array<{ smShare: number; maxQuota: number }>): CandidateList => {
    let key = '';
    const nqs: number[] = [];
    for (const o of opts) {
      let nq = 0;
      while (nq < quotaLevels.length && quotaLevels[nq] <= o.maxQuota + EPS) nq++;
      nqs.push(nq);
      key += `${o.smShare}:${nq};`;
    }
    const sh = x.shared;
    let memo = sh && onGpuMemo.get(sh);
    const hit = memo?.get(key);
    if (hit) return hit;
    // options by SM grid index (-1: some option is off the grid)
    let onGrid = !!sh;
    const bySi: number[][] = [];
    for (let k = 0; k < opts.length && onGrid; k++) {
      const si = sh!.smIndex.get(Math.round(opts[k].smShare * 1e3));
      if (si === undefined || x.smGrid[si] !== opts[k].smShare) onGrid = false;
      else (bySi[si] ??= []).push(k);
    }
    let out: CandidateList;
    if (onGrid) {
      const groups = groupsOf(x.smGrid);
      const nql = quotaLevels.length;
      let g = 0;
      // one group's entries: option index, quota index, batch index, and the candidate values
      const ent: number[][] = [];
      const list: CandidateList = new CandidateList((): boolean => {
        const n0 = list.n;
        while (list.n === n0 && g < groups.length) {
          ent.length = 0;
          for (const i of groups[g]) {
            const si = Math.floor(i / nql);
            const ks = bySi[si];
            if (!ks) continue;
            const qi = i % nql;
            const s = x.smGrid[si];
            const q = quotaLevels[qi];
            for (const k of ks) {
              if (qi >= nqs[k]) continue;
              for (let bi = 0; bi < x.batches.length; bi++) {
                const b = x.batches[bi];
                const c = capOf(x, b, s, q);
                if (c > 0) ent.push([k, qi, bi, s, q, b, c, Math.min(c, rate1(x, s, q)), worstLatency(x, b, s, q)]);
              }
            }
          }
          if (ent.length > 1) ent.sort((a, b) => b[6] - a[6] || a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
          for (const e of ent) list.push(e[3], e[4], e[5], e[6], e[7], e[8], e[3] * e[4]);
          g++;
        }
        return list.n > n0;
      });
      out = list;
    } else {
      const tmp = new CandidateList();
      for (const o of opts)
        for (const q of quotaLevels) {
          if (q > o.maxQuota + EPS) break;
          pushCands(x, tmp, o.smShare, q);
        }
      // ascending cost, the most capable first, stable (insertion order on ties)
      const order = Array.from({ length: tmp.n }, (_, i) => i);
      const d = tmp.d;
      order.sort((a, b) => d[a * CAND_W + 6] - d[b * CAND_W + 6] || d[b * CAND_W + 3] - d[a * CAND_W + 3] || a - b);
      out = new CandidateList();
      for (const i of order) {
        const o = i * CAND_W;
        out.push(d[o], d[o + 1], d[o + 2], d[o + 3], d[o + 4], d[o + 5], d[o + 6]);
      }
    }
    if (sh) {
      if (!memo) onGpuMemo.set(sh, (memo = new Map()));
      if (memo.size >= 4096) memo.clear();
      memo.set(key, out);
    }
    return out;
  };
  /**
   * The cheapest way to make fleet f fit T with copies of one configuration among `cands` (ascending
   * cost): the least total cost m·s·q (the most capable on equal cost); when nothing fits within
   * mMax copies, the most capable configuration. Copies past the first are placed by later calls.
   */
  const cheapestCover = (x: CapabilityTables, f: Fleet, T: number, mMax: number, cands: CandidateList): Candidate | undefined => {
    let best = -1;
    let bestCap = 0;
    let bestTotal = Infinity;
    let top = -1;
    let topCap = 0;
    for (let i = 0; i < cands.n || cands.grow(); i++) {
      const d = cands.d;
      const o = i * CAND_W;
      const cost = d[o + 6];
      if (cost >= bestTotal + EPS) break;
      const c = d[o + 3];
      if (top < 0 || c > topCap) (top = i), (topCap = c);
      const lb = Math.max(1, Math.floor((T - f.mu) / c) + 1) * cost;
      if (lb > bestTotal + EPS) continue;
      const m = copiesFor(x, f, c, d[o + 4], d[o + 5], T, mMax);
      if (m === Infinity) continue;
      const total = m * cost;
      if (total < bestTotal - EPS || (best >= 0 && Math.abs(total - bestTotal) <= EPS && c > bestCap)) {
        best = i;
        bestCap = c;
        bestTotal = total;
      }
    }
    const k = best >= 0 ? best : top;
    return k < 0 ? undefined : cands.at(k);
  };
  return { fleetOf, fits, fleetCap, copiesFor, pushCands, candsMemo, candidatesOf, onGpuMemo, onGpuCandidates, cheapestCover };
}
