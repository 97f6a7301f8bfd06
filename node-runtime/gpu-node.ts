/**
 * The agent's GPU side at start-up (the I/O edge around gpus.ts, gpu-replica.ts and mps.ts):
 * with the GPUs found, the limiter if built and tokend's socket, it starts the MPS control daemon
 * where the node has one (as the node's GPU uid when functions are sandboxed), and gives the agent
 * what it hands replicas that ask for a GPU.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isAlive } from '../gateway/lib/process';
import { GpuNode, onPath } from './gpus';
import type { GpuEnforcement } from '../gateway/providers/function-provider';
import { GPU_UID } from './function-users';
import { describeGpus, gpuEnforcement, GpuNodeSetup, GpuReplicas } from './gpu-replica';
import { MPS_CONTROL, MpsDaemon } from './mps';
import { TokendControl } from './tokend-control';

/** native/build/liblimiter.so (built by `make -C native` where cuda.h exists). */
export function limiterLibraryPath(): string {
  return resolve(__dirname, '..', 'native', 'build', 'liblimiter.so');
}

export interface GpuNodeRuntime {
  replicas?: GpuReplicas;
  /** One line: the GPUs and what is enforced on them (`/system/info`, start-up log). */
  describe: string;
  /** What a GPU replica is held to (`enforcement().gpu`); absent without GPUs. */
  enforcement?: GpuEnforcement;
  /** Stops the MPS control daemon, if this started one. */
  stop(): void;
}

/**
 * Why MPS is not used on this node, or undefined when it can be: it needs GPUs and the control
 * program on PATH. (On a stub node the program found is whatever stands in for it: the tests'.)
 * An MPS server serves one uid at a time, so with isolation every GPU replica of the node runs as
 * one GPU uid (`GPU_UID`); without isolation they all run as the platform's.
 */
export function mpsUnusable(node: GpuNode, bin: string | undefined): string | undefined {
  if (!node.gpus.length) return 'no GPU';
  if (!bin) return `no ${MPS_CONTROL} on PATH`;
  return undefined;
}

export interface GpuNodeOptions {
  dataDir: string;
  tokendSocket?: string;
  /** Functions are sandboxed: GPU replicas and the MPS daemon run as `gpuUid`. */
  sandboxed: boolean;
  /** Default `GPU_UID`. */
  gpuUid?: number;
  /** Where to look for the control program (default: PATH). */
  findMps?: () => string | undefined;
  log(line: string): void;
}

export function startGpuNode(node: GpuNode, opts: GpuNodeOptions): GpuNodeRuntime {
  if (!node.gpus.length) return { describe: describeGpus(undefined, node), stop: () => undefined };
  const limiter = limiterLibraryPath();
  const setup: GpuNodeSetup = { node, limiter: existsSync(limiter) ? limiter : undefined, tokendSocket: opts.tokendSocket };
  const bin = (opts.findMps ?? (() => onPath(MPS_CONTROL)))();
  const unusable = mpsUnusable(node, bin);
  const uid = opts.sandboxed ? (opts.gpuUid ?? GPU_UID) : undefined;
  const started: { daemon?: MpsDaemon; why: string } = unusable ? { why: unusable } : MpsDaemon.start(bin!, opts.dataDir, undefined,
    uid !== undefined ? { uid, gid: uid } : undefined);
  const mps = started.daemon;
  if (mps) {
    setup.mpsPipeDir = mps.dirs.pipe;
    if (uid !== undefined) setup.gpuUid = uid;
  } else setup.mpsWhy = started.why;
  // GPU replicas sharing a device then time-slice: said once, loudly (item 3: refuse or warn)
  if (!mps) opts.log(`MPS is not available (${started.why}): GPU SM shares are NOT enforced; GPU replicas that share a device are time-sliced`);
  const describe = describeGpus(setup, node);
  opts.log(`GPUs: ${describe}`);
  return {
    replicas: new GpuReplicas(setup),
    describe,
    enforcement: gpuEnforcement(setup),
    stop() {
      if (!mps) return;
      const r = mps.stop();
      if (!r.ok) opts.log(`MPS control daemon: quit failed: ${r.why}`);
    },
  };
}

/**
 * The agent's `gpuQuota`: a replica's quota becomes `<q, limit>` (`<q, q>` without a limit) on its
 * GPU's tokend window, by pid; tokend lends idle window time up to the limit.
 * tokend keeps a rule per pid (256 at most) and is not told when a replica exits, so the rules of
 * pids that are gone are removed first: a node that starts many replicas would fill the table.
 */
export function gpuQuotaPusher(control: Pick<TokendControl, 'setQuota' | 'remove'>, alive: (pid: number) => boolean = isAlive) {
  const rules = new Map<number, number>(); // pid → device
  return async (pid: number, device: number, quota: number, limit?: number): Promise<void> => {
    for (const [p, d] of rules) {
      if (p === pid || alive(p)) continue;
      rules.delete(p);
      await control.remove({ pid: p, device: `gpu${d}` }).catch(() => undefined);
    }
    await control.setQuota({ pid, device: `gpu${device}`, request: quota, limit: Math.min(1, Math.max(quota, limit ?? quota)) });
    rules.set(pid, device);
  };
}
