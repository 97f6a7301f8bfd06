/**
 * tokend --policy dilu (Dilu's RCKM rule, native/tokend/rckm.c) as a daemon: the C unit tests of
 * the rule, then two raw protocol clients on the CPU device — a high-priority (SLO) one and a low
 * one — whose GRANTs follow the rule: while the high client is active the low one gets only
 * C · request (C starts at 0.1 of the device), the high one its request while low work is
 * pending; when the high client exits C = (1 − Σrequest_high) = 1 and the low one gets
 * L · request / Σrequest_low with L = C · Σlimit_low.
 */
import { execFileSync } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { createTokendControl } from '../../node-runtime/tokend-control';
import { startTokend, type TokendProcess } from '../../node-runtime/tokend-process';
import { buildDir, make, run, sleep, tmp } from './helpers';

const MAGIC = 0x444e4b54;
const CPU = 0xffff;
const [HELLO, WELCOME, ACQUIRE, GRANT] = [1, 2, 3, 4];
const F_SLO = 1;
const WINDOW_MS = 5;
const CAP_NS = WINDOW_MS * 1e6;

function msg(type: number, flags: number, a = 0n, c = 0n): Buffer {
  const b = Buffer.alloc(56);
  b.writeUInt32LE(MAGIC, 0);
  b.writeUInt16LE(1, 4);
  b.writeUInt16LE(type, 6);
  b.writeUInt32LE(CPU, 8);
  b.writeUInt32LE(flags, 12);
  b.writeBigUInt64LE(a, 16);
  b.writeBigUInt64LE(c, 32);
  return b;
}

/** A raw client: its id (WELCOME) and the grants it received, newest last. */
interface Raw { id: number; grants: number[]; sock: net.Socket; busy?: NodeJS.Timeout }

async function connect(socketPath: string, slo: boolean): Promise<Raw> {
  const sock = net.createConnection(socketPath);
  const raw: Raw = { id: 0, grants: [], sock };
  let buf = Buffer.alloc(0);
  const welcomed = new Promise<void>((resolve, reject) => {
    sock.on('error', reject);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 56) {
        const type = buf.readUInt16LE(6);
        if (type === WELCOME) {
          raw.id = Number(buf.readBigUInt64LE(24));
          resolve();
        } else if (type === GRANT) raw.grants.push(Number(buf.readBigUInt64LE(16)));
        buf = buf.subarray(56);
      }
    });
  });
  sock.write(msg(HELLO, slo ? F_SLO : 0));
  await welcomed;
  // busy: reports 1 ms used and a launch every 2 ms (never idle for a whole window)
  raw.busy = setInterval(() => sock.write(msg(ACQUIRE, 0, 1_000_000n, 1n)), 2);
  return raw;
}

function close(r: Raw): void {
  clearInterval(r.busy);
  r.sock.destroy();
}

beforeAll(() => make('all'));

test('RCKM rule unit tests (C: state transitions and numbers) pass', () => {
  const out = execFileSync(path.join(buildDir, 'rckm_test'), { encoding: 'utf8' });
  expect(out).toMatch(/^0 of \d+ failed$/m);
});

test('an unknown --policy is refused', async () => {
  const t = tmp();
  try {
    const r = await run(path.join(buildDir, 'tokend'), ['--socket', path.join(t.dir, 's'), '--control', path.join(t.dir, 'c'), '--policy', 'fair']);
    expect(r.code).toBe(2);
  } finally {
    t.cleanup();
  }
});

describe('tokend --policy dilu', () => {
  let t: ReturnType<typeof tmp>;
  let tokend: TokendProcess;
  beforeEach(async () => {
    t = tmp();
    tokend = await startTokend({ dir: t.dir, windowMs: WINDOW_MS, cpuCapacity: 1, policy: 'dilu' });
  });
  afterEach(async () => {
    await tokend.stop();
    t.cleanup();
  });

  test('low client held at C · request while the high one is active; C = UPPER when it exits', async () => {
    const ctl = createTokendControl(tokend.controlPath);
    const high = await connect(tokend.socketPath, true);
    const low = await connect(tokend.socketPath, false);
    try {
      await ctl.setQuota({ clientId: high.id, device: 'cpu', request: 0.5, limit: 1 });
      await ctl.setQuota({ clientId: low.id, device: 'cpu', request: 0.2, limit: 0.4 });
      const st = await ctl.stats();
      expect(st.policy).toBe('dilu');
      expect(st.rckm?.find((r) => r.device === 'cpu')).toBeDefined();
      await sleep(200);
      const n = low.grants.length;
      await sleep(100);
      const lowWhileHigh = low.grants.slice(n);
      expect(lowWhileHigh.length).toBeGreaterThan(0);
      // conservative: far below its request (0.2 of the device); C has at most grown by 1.3 a few times
      for (const g of lowWhileHigh) expect(g / CAP_NS).toBeLessThanOrEqual(0.2 * 0.3);
      // the high client gets its request while low work is pending
      expect(high.grants.slice(-5).some((g) => Math.abs(g / CAP_NS - 0.5) < 1e-6)).toBe(true);
      close(high);
      const t0 = Date.now();
      while (Date.now() - t0 < 5000 && !(await ctl.stats()).rckm?.some((r) => r.device === 'cpu' && r.c === 1)) await sleep(20);
      const after = (await ctl.stats()).rckm!.find((r) => r.device === 'cpu')!;
      expect(after.c).toBe(1);
      expect(after.low).toBeCloseTo(0.4, 9);
      const m = low.grants.length;
      await sleep(100);
      const lowAfter = low.grants.slice(m);
      expect(lowAfter.length).toBeGreaterThan(0);
      for (const g of lowAfter) expect(g / CAP_NS).toBeCloseTo(0.4, 6);
    } finally {
      close(high);
      close(low);
    }
  });
});
