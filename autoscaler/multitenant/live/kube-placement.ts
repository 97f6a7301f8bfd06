/**
 * The live fixed-cluster placement on Kubernetes (pure; the PlaceFn the placement gate calls,
 * gateway/providers/kubernetes/placement-gate.ts): best fit. A fractional-GPU pod goes to the GPU
 * whose free share after it is smallest (packing shares onto few GPUs, Dilu's aim, with the sum of
 * shares on a GPU at most 1: Ω = 1); a CPU pod to the node whose free cores after it are fewest;
 * a whole-GPU pod to the node with the fewest free whole GPUs that still has its count (a GPU
 * holding fractional pods is not free). Ties go to the node listed first. Engineer C's placement
 * (autoscaler/multitenant/placement/) works on the Dilu simulator's cluster model; wiring it here
 * is left to do.
 */
import type { NodeView, Placement, PodNeed } from '../../../gateway/providers/kubernetes/placement-gate';

const EPS = 1e-9;

/** Σ fractional shares per GPU index on a node. */
function gpuLoads(n: NodeView): number[] {
  const loads = Array.from({ length: n.gpus }, () => 0);
  for (const p of n.pods) if (p.gpuShare !== undefined && p.gpu !== undefined && p.gpu < n.gpus) loads[p.gpu] += p.gpuShare;
  return loads;
}

/** Whole GPUs taken on a node (by whole-GPU pods, and any GPU a fractional pod uses). */
function wholeTaken(n: NodeView): number {
  const loads = gpuLoads(n);
  return n.pods.reduce((s, p) => s + p.wholeGpus, 0) + loads.filter((l) => l > EPS).length;
}

export function bestFitPlace(pod: PodNeed, nodes: readonly NodeView[]): Placement {
  if (nodes.length === 0) return { wait: 'no node may take it (selector, affinity, taints, readiness)' };
  const fmt = (x: number) => x.toFixed(2);
  if (pod.gpuShare !== undefined) {
    let best: { node: string; gpu: number; left: number } | undefined;
    for (const n of nodes) {
      const loads = gpuLoads(n);
      const whole = n.pods.reduce((s, p) => s + p.wholeGpus, 0);
      loads.forEach((l, gpu) => {
        // GPUs the device plugin hands to whole-GPU pods are not ours to share: the last `whole` indices are kept clear
        if (gpu >= n.gpus - whole) return;
        const left = 1 - l - pod.gpuShare!;
        if (left < -EPS) return;
        if (!best || left < best.left - EPS) best = { node: n.name, gpu, left };
      });
    }
    if (!best) return { wait: `no GPU has ${fmt(pod.gpuShare)} of its SM share free` };
    return { node: best.node, gpu: best.gpu, why: `best fit: GPU ${best.gpu} of ${best.node}, ${fmt(Math.max(0, best.left))} share free after ${pod.name}` };
  }
  if (pod.wholeGpus > 0) {
    const fits = nodes.map((n) => ({ n, free: n.gpus - wholeTaken(n) })).filter((x) => x.free >= pod.wholeGpus);
    if (!fits.length) return { wait: `no node has ${pod.wholeGpus} whole GPU(s) free` };
    const b = fits.reduce((a, x) => (x.free < a.free ? x : a));
    return { node: b.n.name, why: `best fit: ${b.n.name}, ${b.free - pod.wholeGpus} whole GPU(s) free after ${pod.name}` };
  }
  const fits = nodes.map((n) => ({ n, free: n.cpus - n.pods.reduce((s, p) => s + p.cores, 0) - pod.cores })).filter((x) => x.free >= -EPS);
  if (!fits.length) return { wait: `no node has ${fmt(pod.cores)} core(s) free` };
  const b = fits.reduce((a, x) => (x.free < a.free - EPS ? x : a));
  return { node: b.n.name, why: `best fit: ${b.n.name}, ${fmt(Math.max(0, b.free))} core(s) free after ${pod.name}` };
}
