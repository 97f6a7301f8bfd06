/**
 * OpenFaaS idle semantics (faas-idler, `com.openfaas.scale.zero-duration`), pure: a function with
 * min_scale 0 that has had replicas and no work for the idle window may go to zero. Shared by the
 * hybrid policy (its own decision reaches 0) and the live loop (which applies it to any policy).
 */

/** What idleness is judged on: one interval's work and the replicas present. */
export interface IdleInput {
  arrivals: number;
  queueLength: number;
  inFlight: number;
  /** Replicas present (ready or starting). */
  replicas: number;
}

/**
 * Start (ms) of the current idle run, or null when the function is busy or has no replica. A run
 * restarts whenever the function has no replica, so a function woken from zero (by the gateway, on
 * a request the previous interval's counters may not show yet) gets a full window again.
 */
export function idleSince(prev: number | null | undefined, o: IdleInput, now: number): number | null {
  if (o.replicas === 0 || o.arrivals > 0 || o.queueLength > 0 || o.inFlight > 0) return null;
  return prev ?? now;
}

/** Whether an idle run that started at `since` has lasted the window `windowMs` at `now`. */
export function idleLongEnough(since: number | null | undefined, windowMs: number | undefined, now: number): boolean {
  return since !== null && since !== undefined && windowMs !== undefined && windowMs >= 0 && now - since >= windowMs;
}
