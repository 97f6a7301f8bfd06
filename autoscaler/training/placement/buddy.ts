/**
 * Buddy best-fit placement on the topology tree (ElasticFlow §4.3): jobs are placed largest first
 * on aligned power-of-two blocks of GPU indices (GPU index = node × gpusPerNode + local), so a job
 * of n ≤ gpusPerNode workers sits inside one node and a larger one on whole, adjacent nodes under
 * as few switches as possible. Placing in decreasing size on aligned blocks never fragments: if
 * enough GPUs are free, a block exists. A job keeps its previous GPUs when they are still free.
 */
import type { ClusterSpec, Placement, PlacementPhase } from '../types';

const isPow2 = (n: number) => n > 0 && (n & (n - 1)) === 0;

export function buddyPlace(
  gpus: Readonly<Record<string, number>>,
  cluster: ClusterSpec,
  previous: Placement = {},
): Record<string, number[]> {
  const gpn = cluster.gpusPerNode;
  const total = cluster.nodes * gpn;
  const taken = new Uint8Array(total);
  const freeInNode = new Int32Array(cluster.nodes).fill(gpn);
  const out: Record<string, number[]> = {};
  const ids = Object.keys(gpus)
    .filter((id) => gpus[id] > 0)
    .sort((a, b) => gpus[b] - gpus[a] || (a < b ? -1 : 1));
  let free = total;
  const grab = (id: string, list: number[]) => {
    for (const g of list) {
      taken[g] = 1;
      freeInNode[Math.floor(g / gpn)]--;
    }
    free -= list.length;
    out[id] = list;
  };
  const blockFree = (start: number, n: number) => {
    for (let g = start; g < start + n; g++) if (taken[g]) return false;
    return true;
  };
  for (const id of ids) {
    const n = gpus[id];
    if (n > free) throw new Error(`placement: job ${id} needs ${n} GPUs, ${free} free`);
    const prev = previous[id];
    if (prev && prev.length === n && prev.every((g) => g < total && !taken[g]) && (!isPow2(n) || prev[0] % n === 0)) {
      grab(id, [...prev]);
      continue;
    }
    let chosen: number[] | null = null;
    if (isPow2(n) && n <= gpn && gpn % n === 0) {
      // Best fit: the node with the fewest free GPUs that still has an aligned free block.
      let bestNode = -1;
      let bestStart = -1;
      for (let node = 0; node < cluster.nodes; node++) {
        if (freeInNode[node] < n || (bestNode >= 0 && freeInNode[node] >= freeInNode[bestNode])) continue;
        for (let off = 0; off < gpn; off += n) {
          if (blockFree(node * gpn + off, n)) {
            bestNode = node;
            bestStart = node * gpn + off;
            break;
          }
        }
      }
      if (bestStart >= 0) chosen = Array.from({ length: n }, (_, k) => bestStart + k);
    } else if (n % gpn === 0) {
      const k = n / gpn;
      const step = isPow2(k) ? k : 1;
      for (let node = 0; node + k <= cluster.nodes && !chosen; node += step) {
        if (blockFree(node * gpn, n)) chosen = Array.from({ length: n }, (_, i) => node * gpn + i);
      }
    }
    if (!chosen) {
      // Fragmented fallback (non-power-of-two sizes, or a cluster size not a multiple of n).
      chosen = [];
      for (let g = 0; g < total && chosen.length < n; g++) if (!taken[g]) chosen.push(g);
    }
    grab(id, chosen);
  }
  return out;
}

export const buddyPlacement: PlacementPhase = { place: buddyPlace };
