// @ts-check
'use strict';
/** Counters and a window of recent batch latencies for `GET /_/stats` and the report line. */

const WINDOW = 1024;

class Stats {
  constructor() {
    this.requests = 0;
    this.instances = 0;
    this.batches = 0;
    this.errors = 0;
    this.lastBatchSize = 0;
    /** @type {number[]} ring of recent batch latencies, ms */
    this.latencies = [];
    this.next = 0;
  }

  /** @param {number} size instances in the batch @param {number} latencyMs */
  recordBatch(size, latencyMs) {
    this.batches += 1;
    this.instances += size;
    this.lastBatchSize = size;
    if (this.latencies.length < WINDOW) this.latencies.push(latencyMs);
    else this.latencies[this.next] = latencyMs;
    this.next = (this.next + 1) % WINDOW;
  }

  /** @param {number} q in [0, 1] @returns {number | null} latency quantile over the window, ms */
  quantile(q) {
    if (this.latencies.length === 0) return null;
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
    return round(sorted[i]);
  }

  /** @param {{ queueLength: number, inFlight: number }} live */
  snapshot(live) {
    return {
      requests: this.requests,
      instances: this.instances,
      batches: this.batches,
      errors: this.errors,
      meanBatchSize: this.batches ? round(this.instances / this.batches) : 0,
      lastBatchSize: this.lastBatchSize,
      batchLatencyMs: { p50: this.quantile(0.5), p99: this.quantile(0.99), window: this.latencies.length },
      queueLength: live.queueLength,
      inFlightBatch: live.inFlight,
    };
  }
}

/** @param {number} x */
const round = (x) => Math.round(x * 1000) / 1000;

/**
 * Per batch size, an exponential moving average of batch latency: the token request for the
 * next batch of that size. Sizes never seen are scaled linearly from the nearest seen size.
 */
class LatencyEstimator {
  /** @param {number} alpha weight of the newest sample */
  constructor(alpha = 0.2) {
    this.alpha = alpha;
    /** @type {Map<number, number>} */
    this.bySize = new Map();
  }

  /** @param {number} size @param {number} ms */
  observe(size, ms) {
    const prev = this.bySize.get(size);
    this.bySize.set(size, prev === undefined ? ms : prev + this.alpha * (ms - prev));
  }

  /** @param {number} size @returns {number} estimated latency, ms (0 when nothing seen yet) */
  estimate(size) {
    const exact = this.bySize.get(size);
    if (exact !== undefined) return exact;
    let best = 0;
    let bestMs = 0;
    for (const [s, ms] of this.bySize) {
      if (best === 0 || Math.abs(s - size) < Math.abs(best - size)) { best = s; bestMs = ms; }
    }
    return best === 0 ? 0 : (bestMs * size) / best;
  }
}

module.exports = { Stats, LatencyEstimator, round };
