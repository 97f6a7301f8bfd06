import { ReplicaState } from '../../registry/registry';

/** A replica as the rollout policy sees it: which version it runs and whether it serves. */
export interface RolloutReplica {
  id: string;
  /** `current`: started from the function's present spec and image; `old`: from an earlier one. */
  version: 'current' | 'old';
  state: ReplicaState;
  /** RFC3339; newer replicas are stopped first on a scale-down (they have warmed up least). */
  startedAt: string;
  /** Named by the autoscaler for removal (its evict set): stopped before any other. */
  evict: boolean;
  restarts?: number;
  lastError?: string;
  /**
   * Started again from the version that last served the whole function, by an agent that
   * restarted while an update to a newer one was stalled: kept while on its first start.
   */
  recovering?: boolean;
}

/** What the agent does now: start `start` replicas of the current version and stop `stop`. */
export interface RolloutPlan {
  start: number;
  /** Replica ids, in the order chosen. */
  stop: string[];
  /** Why a rolling update is not moving (a new replica that does not get ready), for the logs. */
  stalled?: string;
}

/** Kubernetes' `maxSurge`: replicas beyond desired allowed while old ones are being replaced. */
export const MAX_SURGE = 1;

/**
 * Scale-down order, kept from before rolling updates had a surge limit: the autoscaler's named
 * replicas first, then those not serving (crashed, starting, draining), then the newest.
 */
function victimOrder(a: RolloutReplica, b: RolloutReplica): number {
  const rank = (r: RolloutReplica) => (r.evict ? -1 : { crashed: 0, starting: 1, draining: 2, ready: 3 }[r.state]);
  return rank(a) - rank(b) || b.startedAt.localeCompare(a.startedAt);
}

/**
 * Which replicas to start and stop so the running ones converge on `desired` replicas of the
 * current version: a rolling update with `maxSurge: 1, maxUnavailable: 0`, as a Kubernetes
 * Deployment does it. Pure: the agent does the I/O.
 *
 * - At most `desired + 1` replicas (old and current, whatever their state) while old ones remain,
 *   `desired` otherwise; a crashed replica counts (it restarts by itself), so a crash loop cannot
 *   make the agent start more and more.
 * - Old replicas that do not serve are stopped at once; an old ready one is stopped only while more
 *   replicas are ready than desired, i.e. once a new one is ready, one for one. So the ready count
 *   never falls below `min(desired, ready before)` through this plan (crashes and the autoscaler's
 *   named evictions aside), and a new version that never gets ready stalls the update with the
 *   old replicas serving instead of taking them down.
 * - A scale-down during an update stops old replicas first (as far as the ready count allows), then
 *   current ones in `victimOrder`; a scale-up starts current ones.
 */
export function planRollout(desired: number, replicas: RolloutReplica[]): RolloutPlan {
  const want = Math.max(0, Math.floor(desired));
  const stop: RolloutReplica[] = [];
  const gone = (r: RolloutReplica) => stop.includes(r);
  const left = () => replicas.filter((r) => !gone(r));
  const ready = () => left().filter((r) => r.state === 'ready').length;

  // old replicas that serve nobody are not worth keeping: the new version replaces them (but a
  // recovered one on its first start is what will serve while the new version is not ready)
  const recovering = (r: RolloutReplica) => r.recovering && r.state === 'starting' && !r.restarts;
  stop.push(...replicas.filter((r) => r.version === 'old' && r.state !== 'ready' && !recovering(r)));
  // current replicas beyond desired (a scale-down), serving ones last
  const current = replicas.filter((r) => r.version === 'current').sort(victimOrder);
  stop.push(...current.slice(0, Math.max(0, current.length - want)));
  // old ready replicas retire while more are ready than desired (a new one got ready, or a scale-down)
  const oldReady = replicas.filter((r) => r.version === 'old' && r.state === 'ready').sort(victimOrder);
  stop.push(...oldReady.slice(0, Math.max(0, ready() - want)));
  // still over the surge limit: stop current replicas that do not serve yet (never a ready one)
  const rolling = () => left().some((r) => r.version === 'old');
  const cap = () => want + (rolling() ? MAX_SURGE : 0);
  for (const r of current.filter((x) => !gone(x) && x.state !== 'ready')) {
    if (left().length <= cap()) break;
    stop.push(r);
  }
  const currentLeft = left().filter((r) => r.version === 'current').length;
  const start = Math.max(0, Math.min(want - currentLeft, cap() - left().length));
  return { start, stop: stop.map((r) => r.id), stalled: rolling() && start === 0 ? stalledReason(left()) : undefined };
}

/**
 * Names the new replicas an update waits for, when one of them has crashed (one still on its first
 * start is just slow). The text changes only with a new crash, so the agent logs each one once.
 */
function stalledReason(left: RolloutReplica[]): string | undefined {
  const waiting = left.filter((r) => r.version === 'current' && r.state !== 'ready');
  const failing = waiting.filter((r) => r.state === 'crashed' || (r.restarts ?? 0) > 0);
  if (!failing.length) return undefined;
  const old = left.filter((r) => r.version === 'old' && r.state === 'ready').length;
  const why = failing.map((r) => `${r.id} crashed ${Math.max(1, r.restarts ?? 0)} time(s)${r.lastError ? ` (${r.lastError})` : ''}`).join('; ');
  return `rolling update stalled: new replica ${why}; ${old} old replica(s) keep serving`;
}
