/**
 * The agent's GPU side at start-up (the I/O edge around gpus.ts, gpu-replica.ts and mps.ts):
 * with the GPUs found, the limiter if built and tokend's socket, it starts the MPS control daemon
 * on a real GPU node, and gives the agent what it hands replicas that ask for a GPU.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isAlive } from '../../lib/process';
import { GpuNode, onPath } from './gpus';
import { describeGpus, GpuNodeSetup, GpuReplicas } from './gpu-replica';
import { MPS_CONTROL, MpsDaemon } from './mps';
import { TokendControl } from './tokend-control';

/** native/build/liblimiter.so (built by `make -C native` where cuda.h exists). */
export function limiterLibraryPath(): string {
  return resolve(__dirname, '..', '..', '..', 'native', 'build', 'liblimiter.so');
}

export interface GpuNodeRuntime {
  replicas?: GpuReplicas;
  /** One line: the GPUs and what is enforced on them (`/system/info`, start-up log). */
  describe: string;
  /** Stops the MPS control daemon, if this started one. */
  stop(): void;
}

/**
 * Why MPS is not used on this node, or undefined when it can be. An MPS server serves the clients
 * of one uid; a client of another uid waits until every client of the running server has exited.
 * With isolation each function runs as its own uid, so a second GPU function's replicas would hang
 * at CUDA initialisation behind the first's: MPS is used only when all replicas share a uid.
 */
export function mpsUnusable(node: GpuNode, sandboxed: boolean, bin: string | undefined): string | undefined {
  if (node.source !== 'nvidia-smi') return node.source === 'stub' ? 'stub GPUs' : 'no GPU';
  if (!bin) return `no ${MPS_CONTROL} on PATH`;
  if (sandboxed) return 'functions run as their own uids and an MPS server serves one uid at a time (MLFAAS_ISOLATION=off to use it)';
  return undefined;
}

export function startGpuNode(node: GpuNode, opts: { dataDir: string; tokendSocket?: string; sandboxed: boolean; log(line: string): void }): GpuNodeRuntime {
  if (!node.gpus.length) return { describe: describeGpus(undefined, node), stop: () => undefined };
  const limiter = limiterLibraryPath();
  const setup: GpuNodeSetup = { node, limiter: existsSync(limiter) ? limiter : undefined, tokendSocket: opts.tokendSocket };
  const bin = onPath(MPS_CONTROL);
  const unusable = mpsUnusable(node, opts.sandboxed, bin);
  const started: { daemon?: MpsDaemon; why: string } = unusable ? { why: unusable } : MpsDaemon.start(bin!, opts.dataDir);
  const mps = started.daemon;
  if (mps) setup.mpsPipeDir = mps.dirs.pipe;
  else setup.mpsWhy = started.why;
  if (!mps && node.source === 'nvidia-smi') opts.log(`MPS control daemon not started (${started.why}): GPU SM shares are not enforced`);
  const describe = describeGpus(setup, node);
  opts.log(`GPUs: ${describe}`);
  return {
    replicas: new GpuReplicas(setup),
    describe,
    stop() {
      if (!mps) return;
      const r = mps.stop();
      if (!r.ok) opts.log(`MPS control daemon: quit failed: ${r.why}`);
    },
  };
}

/**
 * The agent's `gpuQuota`: a replica's quota becomes `<q, q>` on its GPU's tokend window, by pid.
 * tokend keeps a rule per pid (256 at most) and is not told when a replica exits, so the rules of
 * pids that are gone are removed first: a node that starts many replicas would fill the table.
 */
export function gpuQuotaPusher(control: Pick<TokendControl, 'setQuota' | 'remove'>, alive: (pid: number) => boolean = isAlive) {
  const rules = new Map<number, number>(); // pid → device
  return async (pid: number, device: number, quota: number): Promise<void> => {
    for (const [p, d] of rules) {
      if (p === pid || alive(p)) continue;
      rules.delete(p);
      await control.remove({ pid: p, device: `gpu${d}` }).catch(() => undefined);
    }
    await control.setQuota({ pid, device: `gpu${device}`, request: quota, limit: quota });
    rules.set(pid, device);
  };
}
