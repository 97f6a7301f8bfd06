/** A ready replica as the balancer sees it. `outstanding` is this gateway's in-flight count. */
export interface Upstream {
  id: string;
  host: string;
  port: number;
  /** Unix socket path; when set the gateway connects there instead of host:port. */
  socketPath?: string;
  weight: number;
  outstanding: number;
  /**
   * Until when (ms since the epoch) this replica is passed over: a connection to it was refused
   * (it died; the agent will notice and restart or remove it).
   */
  downUntil?: number;
}

/**
 * Weighted least-outstanding-requests: the replica with the smallest (outstanding + 1) / weight
 * among those below `maxInflight`; ties go to the first. Replicas marked down (`downUntil` after
 * `now`) are passed over while another one can take the request; if none can, they are tried
 * (a stale mark must not leave a function with nowhere to go). Pure; O(replicas).
 */
export function pickUpstream(ups: readonly Upstream[], maxInflight: number, now = Date.now()): Upstream | undefined {
  return pickAmong(ups, maxInflight, (u) => !(u.downUntil !== undefined && u.downUntil > now)) ?? pickAmong(ups, maxInflight, () => true);
}

function pickAmong(ups: readonly Upstream[], maxInflight: number, ok: (u: Upstream) => boolean): Upstream | undefined {
  let best: Upstream | undefined;
  let bestScore = Infinity;
  for (const u of ups) {
    if (u.outstanding >= maxInflight || !ok(u)) continue;
    const score = (u.outstanding + 1) / u.weight;
    if (score < bestScore) {
      best = u;
      bestScore = score;
    }
  }
  return best;
}
