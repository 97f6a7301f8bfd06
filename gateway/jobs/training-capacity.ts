import type { ClusterSpec } from '../ports/training-scheduler';
import type { WorkerPlace } from '../ports/training-jobs';

/** The nodes training jobs are planned on now. */
export interface TrainingNodes {
  /** Nodes × worker slots per node, as the policies plan on it. */
  readonly spec: ClusterSpec;
  /** The nodes' names, in the order the plan's slot indices count them (slot g is on node ⌊g / gpusPerNode⌋). */
  readonly nodes: readonly string[];
  /** True: a slot is a GPU (training pods request `nvidia.com/gpu`); false: a CPU core. */
  readonly gpuDevices: boolean;
}

/** Where the training capacity comes from: this node's slots, or a cluster's training nodes. */
export interface TrainingCapacity {
  now(): Promise<TrainingNodes>;
}

/** One node of `slots` worker slots (the local provider: the machine the gateway runs on). */
export function fixedCapacity(slots: number): TrainingCapacity {
  const t: TrainingNodes = { spec: { nodes: 1, gpusPerNode: slots }, nodes: ['local'], gpuDevices: false };
  return { now: async () => t };
}

/**
 * The node and its device indices for a job's placed slots (global indices), or undefined when
 * nothing is placed. A job runs as one pod, so it runs on one node: the placement (buddy
 * allocation of power-of-two sizes no larger than a node) keeps a job in one node, and a job is
 * never admitted with more workers than a node has (`maxWorkersOf`). Pure.
 */
export function placeOf(t: TrainingNodes, slots: readonly number[] | undefined): WorkerPlace | undefined {
  if (!slots?.length) return undefined;
  const per = t.spec.gpusPerNode;
  const node = t.nodes[Math.floor(slots[0] / per)];
  if (node === undefined) return undefined;
  const devices = slots.filter((g) => Math.floor(g / per) === Math.floor(slots[0] / per)).map((g) => g % per);
  return { node, ...(t.gpuDevices ? { devices } : { cpus: devices.length }) };
}

/** The most workers a job can be given: its request, at most one node's slots. Pure. */
export const maxWorkersOf = (requested: number | undefined, t: TrainingNodes) => Math.min(requested ?? t.spec.gpusPerNode, t.spec.gpusPerNode);

/** Whether two places are the same node and devices (or core count). Pure. */
export const samePlace = (a: WorkerPlace | undefined, b: WorkerPlace | undefined) =>
  a?.node === b?.node && a?.cpus === b?.cpus && (a?.devices ?? []).join() === (b?.devices ?? []).join();
