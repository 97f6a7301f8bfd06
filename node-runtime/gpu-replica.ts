/**
 * What a GPU replica gets on a GPU node: one device (the least used), the native limiter
 * preloaded and bound to tokend's window for that device (temporal quota), and, where the MPS
 * control daemon runs, an SM limit (spatial share). The env is built here, purely; the agent
 * pushes quotas to tokend for the device recorded here (`deviceOf`).
 *
 * A function asks for a GPU with `mlfaas.gpu: "1"` (label or annotation, see function-spec.ts).
 */
import { basename, dirname, join } from 'node:path';
import { FunctionSpec } from '../gateway/registry/function-spec';
import type { GpuEnforcement } from '../gateway/providers/function-provider';
import { Gpu, GpuNode } from './gpus';
import { BindMount, platformPath, SANDBOX_PATHS } from './sandbox';

/** The limiter's wait for tokend before it fails open, ms (its own default of 200 ms is for tests
 * of the fail-open path; on a busy node a slow grant must not let a replica run unmetered). */
export const TL_TIMEOUT_MS = 1000;

/** The node-wide inputs, as host paths. */
export interface GpuNodeSetup {
  node: GpuNode;
  /** `native/build/liblimiter.so`; absent = not built (no temporal quota). */
  limiter?: string;
  /** tokend's client socket; absent = no tokend (no temporal quota). */
  tokendSocket?: string;
  /** `CUDA_MPS_PIPE_DIRECTORY` of the running MPS control daemon; absent = no spatial share. */
  mpsPipeDir?: string;
  /** Why there is no MPS control daemon (for `/system/info`). */
  mpsWhy?: string;
  /**
   * The uid every sandboxed GPU replica runs as where MPS runs (`GPU_UID`, the daemon's uid);
   * absent: GPU replicas run as their function's own uid (no MPS, or no sandbox).
   */
  gpuUid?: number;
}

/** What one replica is given. */
export interface GpuAttachment {
  /** tokend device index (`gpuN`) = nvidia-smi index. */
  device: number;
  /** Variables to set (after the function's own, which cannot name these). */
  env: Record<string, string>;
  /** `LD_PRELOAD` for the function process itself (the sandbox sets it at the last exec). */
  preload?: string;
  binds: BindMount[];
  /** What is enforced on this replica, for its log. */
  enforced: { temporal: boolean; spatial: boolean };
  /** The SM share it starts at, where it is enforced (spatial); absent otherwise. */
  smShare?: number;
}

/** The least used GPU (fewest replicas), lowest index on ties. Pure. */
export function pickGpu(gpus: Gpu[], inUse: number[]): Gpu {
  const count = (g: Gpu) => inUse.filter((i) => i === g.index).length;
  return [...gpus].sort((a, b) => count(a) - count(b) || a.index - b.index)[0];
}

export interface GpuEnvInput {
  gpu: Gpu;
  setup: GpuNodeSetup;
  spec: FunctionSpec;
  /** The replica is sandboxed: paths are given as it sees them, binds are returned. */
  sandboxed: boolean;
  /** The function's own LD_LIBRARY_PATH, if any (the stub driver goes first). */
  ldLibraryPath?: string;
  /** The replica's SM share in (0, 1] (the autoscaler's, else `mlfaas.gpu.sm_share`, else 1). */
  smShare?: number;
}

/** `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` for an SM share: share × 100, rounded, at least 1. */
export function mpsPercent(smShare: number): number {
  return Math.min(100, Math.max(1, Math.round(smShare * 100)));
}

/** The share a percentage stands for (what a replica started at `mpsPercent(s)` runs at). */
export const shareOfPercent = (pct: number): number => pct / 100;

/**
 * The replica's GPU environment (pure):
 * - `CUDA_VISIBLE_DEVICES` = the GPU's UUID (CUDA orders devices fastest-first unless told
 *   otherwise, nvidia-smi by PCI bus: an index could name another GPU; a UUID cannot);
 * - `LD_PRELOAD` of the limiter, `TL_TOKEND_SOCKET`, `TL_DEVICE` = the nvidia-smi index (the
 *   tokend window its launches are metered against), `TL_TIMEOUT_MS`, and `TL_SLO=1` for a
 *   function with a latency SLO (Dilu's SLO-sensitive client in tokend's policy);
 * - with MPS: `CUDA_MPS_PIPE_DIRECTORY` (what a client reads; the log directory is the daemon's)
 *   and `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` = SM share × 100 (`mlfaas.gpu.sm_share`, default 1);
 * - on a stub node, the stub driver's directory first on `LD_LIBRARY_PATH`.
 */
export function gpuReplicaEnv(i: GpuEnvInput): Omit<GpuAttachment, 'device'> {
  const { gpu, setup, spec, sandboxed } = i;
  const seen = (p: string) => (sandboxed ? platformPath(p) : p);
  const env: Record<string, string> = { CUDA_VISIBLE_DEVICES: gpu.uuid };
  const binds: BindMount[] = [];
  let preload: string | undefined;
  const temporal = !!(setup.limiter && setup.tokendSocket);
  if (temporal) {
    const dir = dirname(setup.tokendSocket!);
    env.TL_TOKEND_SOCKET = sandboxed ? join(SANDBOX_PATHS.tokend, basename(setup.tokendSocket!)) : setup.tokendSocket!;
    if (sandboxed) binds.push({ src: dir, dst: SANDBOX_PATHS.tokend, readOnly: true }); // connecting to a socket needs no write access to its mount
    env.TL_DEVICE = String(gpu.index);
    env.TL_TIMEOUT_MS = String(TL_TIMEOUT_MS);
    if (spec.ml.sloLatencyMs !== undefined) env.TL_SLO = '1';
    preload = seen(setup.limiter!);
  }
  const spatial = setup.mpsPipeDir !== undefined;
  let smShare: number | undefined;
  if (spatial) {
    const pct = mpsPercent(i.smShare ?? spec.ml.gpuSmShare ?? 1);
    smShare = shareOfPercent(pct);
    env.CUDA_MPS_PIPE_DIRECTORY = setup.mpsPipeDir!; // outside the data dir: the same path in the sandbox
    env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = String(pct);
  }
  if (setup.node.stubDriverDir) {
    env.LD_LIBRARY_PATH = [seen(setup.node.stubDriverDir), i.ldLibraryPath].filter(Boolean).join(':');
  }
  if (!sandboxed && preload) env.LD_PRELOAD = preload;
  return { env, preload, binds, enforced: { temporal, spatial }, ...(smShare !== undefined ? { smShare } : {}) };
}

/**
 * The node's GPUs as the agent hands them out: one per replica that asks, kept across its
 * restarts, released when it stops. No I/O.
 */
export class GpuReplicas {
  private assigned = new Map<string, number>();

  constructor(readonly setup: GpuNodeSetup) {}

  /**
   * The replica's GPU attachment, or undefined when the function wants none or the node has none.
   * `smShare`: the share it starts at (a replacement's; default the function's `mlfaas.gpu.sm_share`).
   */
  attach(replicaId: string, spec: FunctionSpec, sandboxed: boolean, ldLibraryPath?: string, smShare?: number): GpuAttachment | undefined {
    const gpus = this.setup.node.gpus;
    if (!spec.ml.gpus || !gpus.length) return undefined;
    const prev = this.assigned.get(replicaId);
    const others = [...this.assigned].filter(([id]) => id !== replicaId).map(([, d]) => d);
    const gpu = gpus.find((g) => g.index === prev) ?? pickGpu(gpus, others);
    this.assigned.set(replicaId, gpu.index);
    return { device: gpu.index, ...gpuReplicaEnv({ gpu, setup: this.setup, spec, sandboxed, ldLibraryPath, smShare }) };
  }

  release(replicaId: string): void {
    this.assigned.delete(replicaId);
  }

  /** The tokend device of a replica holding a GPU. */
  deviceOf(replicaId: string): number | undefined {
    return this.assigned.get(replicaId);
  }
}

/**
 * What this node holds a GPU replica to (`enforcement().gpu`), per dimension: its SM share where
 * the MPS control daemon runs, its time quota where the limiter is built and tokend runs, never
 * its device memory. Pure.
 */
export function gpuEnforcement(setup: GpuNodeSetup): GpuEnforcement {
  const timeQuota = setup.limiter && setup.tokendSocket ? 'limiter' : 'none';
  const smShare = setup.mpsPipeDir ? 'mps' : 'none';
  const t = timeQuota === 'limiter' ? 'time quota by the limiter and tokend (a cooperative process: LD_PRELOAD)' : `time quota NOT enforced ` +
    `(${setup.limiter ? 'no tokend' : 'liblimiter.so not built'})`;
  const uid = setup.gpuUid !== undefined ? `, every GPU replica as uid ${setup.gpuUid}` : '';
  const sm = smShare === 'mps' ? `SM share by MPS, fixed at start (a new share is a replacement replica${uid})` : `SM share NOT enforced ` +
    `(MPS not available: ${setup.mpsWhy ?? 'not started'}): planned at 1`;
  return { smShare, timeQuota, memory: 'none', summary: `GPU replicas: ${t}; ${sm}; device memory not capped` };
}

/** One line for `/system/info` and the start-up log. */
export function describeGpus(setup: GpuNodeSetup | undefined, node: GpuNode): string {
  if (!node.gpus.length) return `none (${node.note ?? 'no GPU'})`;
  const list = node.gpus.map((g) => `gpu${g.index} ${g.name}${g.memoryMiB ? ` ${g.memoryMiB} MiB` : ''}`).join(', ');
  const temporal = setup?.limiter && setup.tokendSocket
    ? 'temporal quota enforced (limiter + tokend)'
    : `temporal quota not enforced (${setup?.limiter ? 'no tokend' : 'liblimiter.so not built'})`;
  const spatial = setup?.mpsPipeDir
    ? `SM share enforced (MPS${setup.gpuUid !== undefined ? `, GPU replicas as uid ${setup.gpuUid}` : ''})`
    : `SM share not enforced (no MPS: ${setup?.mpsWhy ?? 'not started'})`;
  return `${node.source}: ${list}; ${temporal}; ${spatial}`;
}
