/**
 * A GPU replica's SM share is fixed when its process starts (MPS reads
 * `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` once, at CUDA initialisation): a new share is a new
 * replica. This is the agent's pure plan for it, one reconcile at a time: a replica whose wanted
 * share (the provider's `setSmShare`) differs from the share it runs at gets a replacement at the
 * wanted share; once the replacement is ready the old one retires (drains and stops), so the
 * function never serves with fewer replicas than before. Shares compare as the percentage MPS is
 * given (0.503 and 0.5 are the same 50 %).
 */
import type { ReplicaState } from '../../registry/registry';
import { mpsPercent } from '../../../node-runtime/gpu-replica';

/** A running replica as the plan sees it. */
export interface ShareHolder {
  id: string;
  state: ReplicaState;
  /** The share it runs at under MPS; undefined: none enforced (never replaced for a share). */
  smShare?: number;
  /** Of the function's current version (a replica an update replaces anyway is left to the rollout). */
  current: boolean;
}

/** A replacement under way: started for `replaces`, at `smShare`. */
export interface Replacement {
  id: string;
  replaces: string;
  state: ReplicaState;
  smShare: number;
}

export interface ShareStep {
  /** Replacements to start: for replica `replaces`, at `smShare`. */
  start: Array<{ replaces: string; smShare: number }>;
  /** Ready replacements that take their old replica's place (the old one retires). */
  swap: Array<{ replacement: string; retire: string }>;
  /** Replacements no longer wanted (their replica went, or its wanted share changed again). */
  cancel: string[];
}

const same = (a: number, b: number) => mpsPercent(a) === mpsPercent(b);

/**
 * The step for one function: `running` its replicas (not stopping, replacements left out),
 * `wanted` the share set per replica id, `inFlight` the replacements started before.
 */
export function planShareReplacements(running: readonly ShareHolder[], wanted: Readonly<Record<string, number | undefined>>,
  inFlight: readonly Replacement[]): ShareStep {
  const step: ShareStep = { start: [], swap: [], cancel: [] };
  const byOld = new Map(inFlight.map((x) => [x.replaces, x]));
  for (const x of inFlight) if (!running.some((r) => r.id === x.replaces && r.current)) step.cancel.push(x.id);
  for (const r of running) {
    if (r.smShare === undefined || !r.current || r.state === 'draining') continue;
    const w = wanted[r.id];
    const repl = byOld.get(r.id);
    const needed = w !== undefined && !same(w, r.smShare);
    if (!needed) {
      if (repl) step.cancel.push(repl.id); // wanted back at the share it runs at
      continue;
    }
    if (repl && !same(repl.smShare, w)) {
      step.cancel.push(repl.id); // wanted another share since: the next step starts that one
      continue;
    }
    if (!repl) step.start.push({ replaces: r.id, smShare: w });
    else if (repl.state === 'ready') step.swap.push({ replacement: repl.id, retire: r.id });
  }
  return step;
}
