/**
 * The CPU device path: real Node processes running batches through
 * templates/ml-inference/tokens.js against a real tokend, quotas set through
 * gateway/providers/local/tokend-control.ts.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { createTokendControl, TokendControlError } from '../../gateway/providers/local/tokend-control';
import { startTokend, type TokendProcess } from '../../gateway/providers/local/tokend-process';
import { make, run, sleep, start, tmp } from './helpers';

/** The shape tokens.js documents in JSDoc (it is plain CommonJS, copied into images). */
interface TokenGate {
  acquire(estMs: number): Promise<void>;
  release(usedMs: number): void;
  close(): void;
  stats(): Record<string, number | boolean>;
}
const { createTokenGate } = require('../../templates/ml-inference/tokens.js') as {
  createTokenGate(o: { socketPath?: string | null; device?: string | number; timeoutMs?: number; reconnectMs?: number }): TokenGate;
};

const worker = path.join(__dirname, 'fixtures', 'cpu-worker.js');
const BATCH_MS = 2;
/** The CPU device is declared as half a CPU (--cpu-capacity 0.5): quotas 0.3 / 0.7 of it leave the
 * host room, so a busy CI machine does not decide the result. */
const CAPACITY = 0.5;
const maxRate = (quota: number) => (quota * CAPACITY * 1000) / BATCH_MS; // batches/s

interface Progress { t: number; batches: number }

/** Batches completed per second between two progress points nearest to lo and hi (hrtime ns). */
function rate(lines: Record<string, unknown>[], lo: number, hi: number): number {
  const prog = lines.filter((l) => 't' in l) as unknown as Progress[];
  const a = prog.find((p) => p.t >= lo);
  const b = [...prog].reverse().find((p) => p.t <= hi);
  if (!a || !b || b.t <= a.t) return NaN;
  return ((b.batches - a.batches) * 1e9) / (b.t - a.t);
}

describe('CPU device token gate (tokens.js + tokend)', () => {
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

  test('two Node replicas with quotas 0.3 / 0.7 get proportional throughput', async () => {
    const ctl = createTokendControl(tokend.controlPath);
    const a = start(process.execPath, [worker, tokend.socketPath, '2.5', String(BATCH_MS)]);
    const b = start(process.execPath, [worker, tokend.socketPath, '2.5', String(BATCH_MS)]);
    await ctl.setQuota({ pid: a.pid, device: 'cpu', request: 0.3, limit: 0.3 });
    await ctl.setQuota({ pid: b.pid, device: 'cpu', request: 0.7, limit: 0.7 });
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code).toBe(0);
    expect(rb.code).toBe(0);
    const lo = Math.max(Number(ra.json[0].t), Number(rb.json[0].t)) + 300e6;
    const hi = Math.min(Number(ra.json[ra.json.length - 2].t), Number(rb.json[rb.json.length - 2].t));
    const qa = rate(ra.json, lo, hi);
    const qb = rate(rb.json, lo, hi);
    const share = qa / (qa + qb);
    console.log(`cpu 0.3/0.7: ${qa.toFixed(0)} vs ${qb.toFixed(0)} batches/s, share ${share.toFixed(3)}`);
    expect(Math.abs(share - 0.3)).toBeLessThanOrEqual(0.06);
    // each stays within its quota of the device (+ 10% slack) and gets most of it
    expect(qa).toBeLessThanOrEqual(maxRate(0.3) * 1.1);
    expect(qb).toBeLessThanOrEqual(maxRate(0.7) * 1.1);
    expect(qb).toBeGreaterThanOrEqual(maxRate(0.7) * 0.7);
    const sa = ra.json[ra.json.length - 1];
    expect(sa.waited).toBeGreaterThan(0);
    expect(sa.failOpen).toBe(0);
  });

  test('a quota change through tokend-control changes a running replica\'s rate', async () => {
    const ctl = createTokendControl(tokend.controlPath);
    const a = start(process.execPath, [worker, tokend.socketPath, '2.4', String(BATCH_MS)]);
    await ctl.setQuota({ pid: a.pid, device: 'cpu', request: 0.2, limit: 0.2 });
    await sleep(1200);
    const changed = await ctl.setQuota({ pid: a.pid, device: 'cpu', request: 0.6, limit: 0.6 });
    expect(changed.applied).toBe(1);
    const st = await ctl.stats();
    expect(st.clients.find((c) => c.pid === a.pid)?.limit).toBe(0.6);
    const r = await a.done;
    expect(r.code).toBe(0);
    const before = rate(r.json, changed.monoNs - 700e6, changed.monoNs);
    const after = rate(r.json, changed.monoNs + 100e6, changed.monoNs + 1000e6);
    console.log(`cpu quota 0.2 -> 0.6: ${before.toFixed(0)} -> ${after.toFixed(0)} batches/s`);
    expect(before).toBeLessThanOrEqual(maxRate(0.2) * 1.15);
    expect(after / before).toBeGreaterThan(1.8); // 3x the quota; ~3.0 measured, > 2 with the CPUs oversubscribed
  });

  test('fails open when tokend is unreachable, and reconnects', async () => {
    const gate = createTokenGate({ socketPath: path.join(t.dir, 'nobody.sock'), device: 'cpu', timeoutMs: 100 });
    const t0 = Date.now();
    await gate.acquire(5);
    expect(Date.now() - t0).toBeLessThan(400);
    expect(gate.stats().failOpen).toBe(1);
    gate.release(5);
    gate.close();

    const live = createTokenGate({ socketPath: tokend.socketPath, device: 'cpu', timeoutMs: 100, reconnectMs: 20 });
    await live.acquire(1);
    expect(live.stats().connected).toBe(true);
    await tokend.stop();
    await sleep(250);
    await live.acquire(1); // open: immediate
    expect(live.stats().failOpen).toBe(1);
    tokend = await startTokend({ dir: t.dir, windowMs: 20 });
    await sleep(300);
    expect(live.stats().connects).toBeGreaterThanOrEqual(2);
    await live.acquire(1);
    expect(live.stats().open).toBe(false);
    live.close();
  });

  test('tokens.js type-checks under its // @ts-check JSDoc', () => {
    const tsc = require.resolve('typescript/bin/tsc');
    const out = spawnSync(process.execPath, [tsc, '--noEmit', '--allowJs', '--checkJs', '--strict', '--target', 'ES2022',
      '--module', 'commonjs', '--types', 'node', path.join(__dirname, '..', '..', 'templates', 'ml-inference', 'tokens.js')],
    { encoding: 'utf8' });
    expect(out.stdout + out.stderr).toBe('');
    expect(out.status).toBe(0);
  });

  test('no socket configured: a no-op gate', async () => {
    const gate = createTokenGate({ socketPath: undefined });
    await gate.acquire(1000);
    gate.release(1000);
    expect(gate.stats()).toMatchObject({ enabled: false, acquired: 1 });
    gate.close();
  });

  test.each([
    { name: 'limit above 1', q: { pid: 1, device: 'cpu' as const, request: 0, limit: 1.5 }, want: /limit/ },
    { name: 'request above limit', q: { pid: 1, device: 'cpu' as const, request: 0.5, limit: 0.2 }, want: /request/ },
    { name: 'no target', q: { device: 'cpu' as const, request: 0, limit: 0.5 }, want: /pid/ },
  ])('control client rejects $name', async ({ q, want }) => {
    await expect(createTokendControl(tokend.controlPath).setQuota(q)).rejects.toThrow(want);
  });

  test('tokend itself validates: bad device and unknown op come back as errors', async () => {
    const r = await run(process.execPath, ['-e', `
      const net = require('net'); const s = net.createConnection(${JSON.stringify(tokend.controlPath)});
      s.on('connect', () => s.write('{"op":"SET_QUOTA","pid":1,"device":"tpu","limit":0.5}\\n'));
      s.on('data', (d) => { process.stdout.write(d); s.end(); });`]);
    expect(r.stdout).toMatch(/"ok":false,"error":"device/);
    await expect(createTokendControl(path.join(t.dir, 'absent.sock')).stats()).rejects.toBeInstanceOf(TokendControlError);
  });
});
