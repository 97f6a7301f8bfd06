/**
 * The node agent's GPU side on a GPU node: tokend (supervised: restarted if it dies, and the
 * agent then applies every quota again) with a window per GPU, its socket in the folder
 * fractional-GPU pods mount (`NODE_TOKEND_DIR`); and the MPS control daemon, its pipe folder in
 * the one they mount (`NODE_MPS_DIR`), where the node has one. The agent pushes each fractional-GPU
 * pod's quota to tokend for every process of the pod (the limiter in the pod gates kernel
 * launches on it); the pod's processes are host pids (the DaemonSet runs with `hostPID`).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { gpuQuotaPusher, mpsUnusable } from '../../../node-runtime/gpu-node';
import { type GpuNode, onPath } from '../../../node-runtime/gpus';
import { MPS_CONTROL, MpsDaemon } from '../../../node-runtime/mps';
import { createTokendControl } from '../../../node-runtime/tokend-control';
import { tokendBinaryPath } from '../../../node-runtime/tokend-process';
import { TokendSupervisor } from '../../../node-runtime/tokend-supervisor';

export interface NodeGpu {
  /** A process's quota on tokend's window of GPU `device`. */
  gpuQuota(pid: number, device: number, quota: number): Promise<void>;
  readonly tokend: TokendSupervisor;
  /** One line: the GPUs, tokend, and MPS (or why not). */
  readonly describe: string;
  /** The MPS control daemon runs: fractional-GPU pods' SM shares are enforced. */
  readonly mps: boolean;
  stop(): Promise<void>;
}

export interface NodeGpuOptions {
  tokendDir: string;
  mpsDir: string;
  windowMs: number;
  log(line: string): void;
  /** tokend restarted (its rules are gone): apply every quota again. */
  onRestart(): void;
}

/** Starts tokend (and MPS where it can run) for a node's GPUs; undefined without GPUs or a built tokend. */
export async function startNodeGpu(node: GpuNode, o: NodeGpuOptions): Promise<NodeGpu | undefined> {
  if (!node.gpus.length) return undefined;
  if (!existsSync(tokendBinaryPath())) {
    o.log(`GPUs found but tokend is not built (${tokendBinaryPath()}): GPU time quotas are not enforced`);
    return undefined;
  }
  mkdirSync(o.tokendDir, { recursive: true });
  const tokend = await TokendSupervisor.start(
    { dir: o.tokendDir, windowMs: o.windowMs, cpuCapacity: cpus().length, gpus: node.gpus.length },
    { log: o.log, restarted: () => undefined, onRestart: async () => o.onRestart() },
  );
  const push = gpuQuotaPusher(createTokendControl(tokend.controlPath));
  const bin = onPath(MPS_CONTROL);
  const why = mpsUnusable(node, bin); // pods of one image user share one MPS server
  const started = why ? { why } : MpsDaemon.start(bin!, o.mpsDir, { pipe: join(o.mpsDir, 'pipe'), log: join(o.mpsDir, 'log') });
  const mps = 'daemon' in started ? started.daemon : undefined;
  const describe = `${node.gpus.length} GPU(s) (${node.source}); tokend window ${o.windowMs} ms at ${tokend.socketPath}; ` +
    `MPS ${mps ? `control daemon, pipes in ${mps.dirs.pipe}` : `not started (${started.why}): SM shares are not enforced`}`;
  o.log(`node agent GPUs: ${describe}`);
  return {
    gpuQuota: push,
    tokend,
    describe,
    mps: !!mps,
    async stop() {
      if (mps) {
        const r = mps.stop();
        if (!r.ok) o.log(`MPS control daemon: quit failed: ${r.why}`);
      }
      await tokend.stop();
    },
  };
}
