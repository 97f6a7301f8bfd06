import type Redis from 'ioredis';
import { coresOf, fitCapacity, resolveTargets } from '../../../autoscaler/multitenant/live/capacity';
import { jobView, MinuteBook, processingMsOf } from '../../../autoscaler/multitenant/live/view';
import { LATENCY_BUCKETS_MS, type SecondCounters } from '../../../gateway/metrics/second-window';
import { Admission, parseEntry } from '../../../gateway/proxy/admission';
import type { JobView } from '../../../autoscaler/multitenant/types';

const sec = (arrivals: number, extra: Partial<SecondCounters> = {}): SecondCounters => ({
  arrivals, completions: 0, errors: 0, rejected: 0, dropped: 0, latencySumMs: 0, buckets: LATENCY_BUCKETS_MS.map(() => 0), queue: 0, inflight: 0,
  perReplica: {}, ...extra,
});
const view = (name: string, replicas: number, quota: number): JobView => ({
  name, processingMs: 100, sloMs: 500, sloPercentile: 99, replicas, readyReplicas: replicas, quota, minuteCounts: [], queueLength: 0, inFlight: 0,
  recentLatencyMs: { mean: NaN, pct: NaN, windowS: 5 }, droppedLastTick: 0,
});

describe('the runner\'s capacity guard', () => {
  it('keeps what fits, and scales every quota down (loudly) when a decision exceeds the cluster', () => {
    const jobs = [view('a', 1, 1), view('b', 1, 1)];
    const ok = resolveTargets(jobs, { jobs: [{ quota: 0.5 }, null], reason: 'r' }, [{ minScale: 1, maxScale: 4 }, { minScale: 1, maxScale: 4 }], [1, 1]);
    expect(fitCapacity(ok.targets, 2).note).toBeUndefined();
    const over = resolveTargets(jobs, { jobs: [{ replicas: 2, quota: 1 }, { replicas: 1, quota: 1 }], reason: 'r' },
      [{ minScale: 1, maxScale: 4 }, { minScale: 1, maxScale: 4 }], [1, 1]);
    const fit = fitCapacity(over.targets, 2);
    expect(coresOf(over.targets)).toBe(3);
    expect(coresOf(fit.targets)).toBeLessThanOrEqual(2);
    expect(fit.note).toMatch(/^RUNNER: the decision asked 3\.00 cores of a 2-core cluster: every quota scaled by 0\.667/);
  });

  it('clamps replicas to min_scale / max_scale and says so', () => {
    const r = resolveTargets([view('a', 1, 1)], { jobs: [{ replicas: 9 }], reason: 'r' }, [{ minScale: 0, maxScale: 3 }], [1]);
    expect(r.targets[0].replicas).toBe(3);
    expect(r.notes[0]).toMatch(/a: 9 replicas clamped to 3/);
  });
});

describe('the controller\'s view of a live function', () => {
  it('counts completed minutes once each', () => {
    const b = new MinuteBook();
    const s = new Map([[119, sec(3)], [120, sec(5)], [121, sec(7)]]);
    b.add(s, 121);
    expect(b.counts()).toEqual([3]); // minute 1 done (3), minute 2 open (5 + 7)
    b.add(s, 121); // the same seconds again: not counted twice
    b.add(new Map([[180, sec(1)]]), 180);
    expect(b.counts()).toEqual([3, 12]);
  });

  it('reads the rate, drops and latency of the window', () => {
    const buckets = LATENCY_BUCKETS_MS.map(() => 0);
    buckets[11] = 10; // 10 requests between 75 and 100 ms
    const w = new Map([[10, sec(10, { completions: 10, latencySumMs: 900, buckets })], [11, sec(20, { dropped: 4, queue: 3 })]]);
    const v = jobView({ name: 'f', processingMs: 50, sloMs: 200, sloPercentile: 99, replicas: 2, readyReplicas: 1, quota: 0.5, minuteCounts: [],
      window: w, windowS: 5, lastSec: 11, tickS: 1 });
    expect(v.arrivalRps).toBe(6);
    expect(v.droppedLastTick).toBe(4);
    expect(v.queueLength).toBe(3);
    expect(v.recentLatencyMs.mean).toBe(90);
    expect(v.recentLatencyMs.pct).toBeGreaterThan(75);
    expect(v.recentLatencyMs.pct).toBeLessThanOrEqual(100);
  });

  it('takes the per-request time at quota 1 from the capability profile', () => {
    const pt = (quota: number, latencyMs: number) => ({ batch: 1, quota, smShare: 1, throughput: 1000 / latencyMs, latencyMs });
    const prof = (points: ReturnType<typeof pt>[]) => ({ function: 'f', version: 'v', measuredAt: '', device: 'cpu' as const, points });
    expect(processingMsOf(prof([pt(1, 40), pt(0.5, 80)]))).toBe(40);
    expect(processingMsOf(prof([pt(0.5, 90)]))).toBe(45);
    expect(processingMsOf(undefined)).toBeUndefined();
  });
});

describe('the gateway\'s admission of the accept rate', () => {
  const entry = (rate: number, untilMs: number) => JSON.stringify({ rate, retryAfterS: 2, reason: 'full', untilMs });

  it('admits exactly the accept rate, evenly, and stops at the entry\'s expiry', async () => {
    let now = 1000;
    const table: Record<string, string> = { 'f.ns': entry(0.25, 5000), 'g.ns': entry(1, 5000) };
    const redis = { hgetall: async () => table } as unknown as Redis;
    const a = new Admission(redis, 500, () => now);
    await a.refresh();
    const verdicts = Array.from({ length: 100 }, () => a.check('f.ns'));
    expect(verdicts.filter((v) => v === undefined).length).toBe(25);
    // never more than 3 drops in a row at 25 %
    expect(verdicts.map((v) => (v ? 'd' : 'a')).join('')).not.toMatch(/dddd/);
    expect(verdicts.find((v) => v)?.retryAfterS).toBe(2);
    expect(a.check('g.ns')).toBeUndefined(); // rate 1: admits all
    expect(a.check('other.ns')).toBeUndefined();
    now = 6000; // expired: a stopped autoscaler throttles no one
    expect(Array.from({ length: 10 }, () => a.check('f.ns')).every((v) => v === undefined)).toBe(true);
  });

  it('ignores malformed and expired entries', () => {
    expect(parseEntry('nope', 0)).toBeUndefined();
    expect(parseEntry(entry(0.5, 10), 20)).toBeUndefined();
    expect(parseEntry(entry(-1, 100), 20)).toBeUndefined();
    expect(parseEntry(entry(0.5, 100), 20)?.rate).toBe(0.5);
  });
});
