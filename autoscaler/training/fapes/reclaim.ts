/**
 * FaPES-Manager's reclaim heuristic (§3, Fig. 6): choose `nr` loaned servers to give back to the
 * inference virtual cluster while preempting as few training jobs as possible.
 *  - reclaim cost of a server = number of still-running jobs on it;
 *  - reclaim gain of a server = number of servers that become free at no further cost once all
 *    jobs on it are preempted (itself included).
 * Iteratively: take the server with the largest gain not above the servers still needed (ties:
 * least cost), preempt its jobs, then every server left with cost 0 is taken too; repeat.
 */

export interface LoanedServer {
  readonly id: string;
  /** Training jobs with workers on this server. */
  readonly jobs: readonly string[];
}

export interface ReclaimChoice {
  /** Servers to reclaim, in the order chosen. */
  readonly servers: string[];
  /** Training jobs preempted (the total reclaim cost is their number). */
  readonly preempted: string[];
  readonly reason: string;
}

export function chooseServersToReclaim(servers: readonly LoanedServer[], nr: number): ReclaimChoice {
  const stopped = new Set<string>();
  const chosen: string[] = [];
  const left = new Map(servers.map((s) => [s.id, s]));
  const cost = (s: LoanedServer) => s.jobs.filter((j) => !stopped.has(j)).length;
  const gain = (s: LoanedServer) => {
    const freed = new Set([...s.jobs, ...stopped]);
    let n = 0;
    for (const o of left.values()) if (o.jobs.every((j) => freed.has(j))) n++;
    return n;
  };
  const takeFree = () => {
    for (const s of [...left.values()]) {
      if (chosen.length >= nr) return;
      if (cost(s) === 0) {
        chosen.push(s.id);
        left.delete(s.id);
      }
    }
  };
  takeFree(); // idle loaned servers cost nothing
  while (chosen.length < nr && left.size > 0) {
    const need = nr - chosen.length;
    let best: LoanedServer | undefined;
    let bestGain = -1;
    let bestCost = Infinity;
    for (const s of left.values()) {
      const g = gain(s);
      const c = cost(s);
      const fits = g <= need;
      const bestFits = bestGain >= 0 && bestGain <= need;
      // Prefer gains that fit; among them the largest gain, then the least cost. If none fits, the smallest gain.
      const better =
        !best ||
        (fits && !bestFits) ||
        (fits && bestFits && (g > bestGain || (g === bestGain && c < bestCost))) ||
        (!fits && !bestFits && (g < bestGain || (g === bestGain && c < bestCost)));
      if (better) {
        best = s;
        bestGain = g;
        bestCost = c;
      }
    }
    const s = best!;
    s.jobs.forEach((j) => stopped.add(j));
    chosen.push(s.id);
    left.delete(s.id);
    takeFree();
  }
  const preempted = [...stopped].sort();
  return { servers: chosen, preempted, reason: `reclaim ${chosen.join(', ')} preempting ${preempted.length} job(s)` };
}
