/**
 * FaPES-Board prices (§5.3): the unit price of a GPU on server s in round t is
 * H·(U/H)^(load/capacity), where U and H are the upper and lower bounds of job completion times
 * (one GPU vs all GPUs), so prices share the unit of completion time and grow with load.
 */

export function serverPrice(load: number, capacity: number, upper: number, lower: number): number {
  if (capacity <= 0) return Infinity;
  if (lower <= 0) throw new Error(`price lower bound must be > 0, got ${lower}`);
  return lower * Math.pow(upper / lower, Math.min(1, Math.max(0, load / capacity)));
}

/** A schedule plan's total price: Σ over rounds and GPUs of the server's price in that round. */
export function planPrice(usage: ReadonlyArray<{ round: number; server: number; gpus: number }>, price: (round: number, server: number) => number): number {
  let p = 0;
  for (const u of usage) p += u.gpus * price(u.round, u.server);
  return p;
}

/** FaPES' per-plan objective: completion time + total resource price (RHS of (6)). */
export function planObjective(completion: number, totalPrice: number): number {
  return completion + totalPrice;
}
