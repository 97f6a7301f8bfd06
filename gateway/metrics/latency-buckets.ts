/**
 * Upper bounds (ms) of the latency histogram the gateway keeps per function per second
 * (`second-window.ts`), in order: the buckets the autoscaler reads its percentiles from.
 */
export const LATENCY_BUCKETS_MS: readonly number[] = [1, 2, 5, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000, 2000, 5000, 10000, Infinity];
