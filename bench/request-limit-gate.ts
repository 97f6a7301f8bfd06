/**
 * The tokend CPU gate's half of bench/request-limit.ts: Node workers running 2 ms batches through
 * templates/ml-inference/tokens.js (test/native/fixtures/cpu-worker.js), quotas set through
 * tokend-control as the agent's tokendCpuEnforcer sets them, tokend's default plan.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTokendControl } from '../node-runtime/tokend-control';
import { startTokend } from '../node-runtime/tokend-process';

const WORKER = join(__dirname, '..', 'test', 'native', 'fixtures', 'cpu-worker.js');
/** tokend's CPU device is half a CPU: the quotas leave the host room. */
export const GATE_CAPACITY = 0.5;

/** One worker's device use (fraction of the device) and batches per second over its run's middle. */
export interface GateUse { used: number; batchesPerS: number }

function run(socket: string, seconds: number): { pid: number; done: Promise<GateUse> } {
  const p = spawn(process.execPath, [WORKER, socket, String(seconds), '2'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<GateUse>((res) =>
    p.on('close', () => {
      const prog = out.trim().split('\n').map((l) => JSON.parse(l) as { t?: number; batches: number; busyMs: number }).filter((l) => l.t);
      const a = prog[Math.min(3, prog.length - 1)];
      const b = prog[prog.length - 2] ?? a;
      const ms = ((b.t as number) - (a.t as number)) / 1e6;
      res(ms > 0 ? { used: (b.busyMs - a.busyMs) / ms / GATE_CAPACITY, batchesPerS: ((b.batches - a.batches) * 1000) / ms } : { used: NaN, batchesPerS: NaN });
    }),
  );
  return { pid: p.pid!, done };
}

/** `n` workers at <request, limit> together for `seconds` under a fresh tokend. */
export async function gateRun(n: number, request: number, limit: number, seconds: number): Promise<GateUse[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rl-gate-'));
  const tokend = await startTokend({ dir, windowMs: 20, cpuCapacity: GATE_CAPACITY });
  try {
    const ctl = createTokendControl(tokend.controlPath);
    const ws = Array.from({ length: n }, () => run(tokend.socketPath, seconds));
    for (const w of ws) await ctl.setQuota({ pid: w.pid, device: 'cpu', request, limit });
    return await Promise.all(ws.map((w) => w.done));
  } finally {
    await tokend.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The gate's scenarios: A alone and A with B busy, at <0.3, 0.6> and at request = limit 0.3. */
export const GATE_SCENARIOS: { name: string; n: number; request: number; limit: number }[] = [
  { name: 'lending, alone', n: 1, request: 0.3, limit: 0.6 },
  { name: 'request = limit, alone', n: 1, request: 0.3, limit: 0.3 },
  { name: 'lending, both busy', n: 2, request: 0.3, limit: 0.6 },
  { name: 'request = limit, both busy', n: 2, request: 0.3, limit: 0.3 },
];
