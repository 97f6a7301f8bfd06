/**
 * The one clock of the platform's loops: milliseconds since the epoch (fake in tests and the
 * simulator). The inference autoscaler, the training round loop, the jobs service and the jobs API
 * read time only through it; what a phase needs in seconds it divides at the edge.
 */
export interface Clock {
  /** ms since the epoch on this clock. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
