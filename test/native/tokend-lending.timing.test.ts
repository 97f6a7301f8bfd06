/**
 * tokend's CPU gate with <request, limit> quotas (issue 24): real Node processes running batches
 * through templates/ml-inference/tokens.js, quotas set through tokend-control as the agent's
 * `tokendCpuEnforcer` sets them. Alone, a replica at <0.3, 0.6> runs up to its limit (the idle
 * capacity is lent to it), at <0.3, 0.3> only to its request; two busy replicas at <0.3, 0.6>
 * each keep at least their request and together use the unrequested time too.
 */
import * as path from 'node:path';
import { createTokendControl, type TokendControl } from '../../node-runtime/tokend-control';
import { startTokend, type TokendProcess } from '../../node-runtime/tokend-process';
import { calibrated, make, sleep, start, tmp, type RunResult } from './helpers';

const worker = path.join(__dirname, 'fixtures', 'cpu-worker.js');
const BATCH_MS = 2;
/** The CPU device is half a CPU: the quotas leave the host room. */
const CAPACITY = 0.5;

interface Progress { t: number; busyMs: number; waitedMs: number }

/** Device time used (fraction of the device) and wall time lost to the host, over the middle of a run. */
function use(r: RunResult): { used: number; other: number } {
  const prog = r.json.filter((l) => 't' in l) as unknown as Progress[];
  const a = prog[Math.min(3, prog.length - 1)];
  const b = prog[prog.length - 2] ?? a;
  const ms = (b.t - a.t) / 1e6;
  if (!(ms > 0)) return { used: NaN, other: 1 };
  const busy = b.busyMs - a.busyMs;
  const waited = b.waitedMs - a.waitedMs;
  return { used: busy / ms / CAPACITY, other: 1 - (busy + waited) / ms };
}

/** Runs `n` workers for 2 s at <request, limit>; each one's use. */
async function runAt(ctl: TokendControl, socket: string, n: number, request: number, limit: number) {
  const ws = Array.from({ length: n }, () => start(process.execPath, [worker, socket, '2', String(BATCH_MS)]));
  for (const w of ws) await ctl.setQuota({ pid: w.pid, device: 'cpu', request, limit });
  const rs = await Promise.all(ws.map((w) => w.done));
  for (const r of rs) expect(r.code).toBe(0);
  return rs.map(use);
}

describe('tokend CPU gate lends idle capacity up to each limit', () => {
  let t: ReturnType<typeof tmp>;
  let tokend: TokendProcess;
  beforeAll(() => make('all'));
  beforeEach(async () => {
    t = tmp();
    tokend = await startTokend({ dir: t.dir, windowMs: 20, cpuCapacity: CAPACITY });
  });
  afterEach(async () => {
    await tokend.stop();
    t.cleanup();
  });

  test('alone: up to the limit, not just the request; both busy: each at least its request', async () => {
    const ctl = createTokendControl(tokend.controlPath);
    const m = await calibrated(async () => {
      const [lent] = await runAt(ctl, tokend.socketPath, 1, 0.3, 0.6);
      await sleep(100);
      const [eq] = await runAt(ctl, tokend.socketPath, 1, 0.3, 0.3);
      await sleep(100);
      const both = await runAt(ctl, tokend.socketPath, 2, 0.3, 0.6);
      console.log(`tokend cpu gate: alone <0.3, 0.6> ${lent.used.toFixed(3)}, <0.3, 0.3> ${eq.used.toFixed(3)}; ` +
        `both busy <0.3, 0.6> ${both.map((x) => x.used.toFixed(3)).join(' / ')} (of the device)`);
      return { lent, eq, both, worst: Math.max(lent.other, eq.other, ...both.map((x) => x.other)) };
    });
    // on any host: the limit caps (+10%: a window's last batch is charged to the next), request = limit caps lower
    expect(m.lent.used).toBeLessThanOrEqual(0.6 * 1.1);
    expect(m.eq.used).toBeLessThanOrEqual(0.3 * 1.1);
    for (const b of m.both) expect(b.used).toBeLessThanOrEqual(0.6 * 1.1);
    expect(m.both[0].used + m.both[1].used).toBeLessThanOrEqual(1.1);
    // what a host that let them run adds: the lent capacity is used, each keeps its request
    if (m.quiet) {
      expect(m.lent.used).toBeGreaterThan(1.4 * m.eq.used);
      for (const b of m.both) expect(b.used).toBeGreaterThanOrEqual(0.3 * 0.8);
    }
  }, 60000);
});
