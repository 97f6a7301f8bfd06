// @ts-check
'use strict';
/**
 * CPU-device token gate for the ml-inference runtime.
 *
 * Speaks tokend's versioned binary protocol (native/include/tokend_proto.h:
 * 56-byte little-endian records, HELLO -> WELCOME, ACQUIRE -> GRANT, pushed
 * REVOKE) over a unix socket. Each batch calls `await gate.acquire(estMs)`
 * before running and `gate.release(actualMs)` after. Like the CUDA limiter,
 * acquire charges the estimate against the window's budget and waits only when
 * the budget is overdrawn; release corrects the charge with the measured time.
 * Unused tokens expire with the window; overdraft is carried into the next.
 *
 * When tokend is unreachable for `timeoutMs` the gate fails open (or keeps
 * waiting with `failClosed`), keeps reconnecting and counts both.
 * No dependencies beyond Node built-ins: this file is copied into images.
 */
const net = require('node:net');

const MSG_SIZE = 56;
const MAGIC = 0x444e4b54;
const VERSION = 1;
const HELLO = 1;
const WELCOME = 2;
const ACQUIRE = 3;
const GRANT = 4;
const REVOKE = 5;
const F_BLOCKED = 2;
const DEVICE_CPU = 0xffff;
const U64_MAX = (1n << 64n) - 1n;

/**
 * @typedef {object} TokenGateOptions
 * @property {string | undefined | null} socketPath tokend's client socket (env MLFAAS_TOKEND_SOCKET); falsy: no-op gate
 * @property {string | number} [device] 'cpu' (default), 'gpuN' or N
 * @property {number} [timeoutMs] tokend silent this long while a batch waits -> fail open (default 200 ms)
 * @property {boolean} [failClosed] keep waiting instead of failing open (default false)
 * @property {number} [reconnectMs] delay between reconnect attempts (default 100 ms)
 */

/**
 * @typedef {object} TokenGateStats
 * @property {boolean} enabled false for the no-op gate
 * @property {boolean} connected
 * @property {boolean} open failing open right now
 * @property {number} budgetMs tokens left in this window, ms (negative: overdraft)
 * @property {number} acquired batches admitted
 * @property {number} waited batches that had to wait for tokens
 * @property {number} waitedMs total time batches waited, ms
 * @property {number} grants GRANT messages received
 * @property {number} grantedMs total tokens granted, ms
 * @property {number} revokes REVOKE messages received
 * @property {number} usedMs total time reported used, ms
 * @property {number} connects
 * @property {number} disconnects
 * @property {number} failOpen times the gate started failing open
 * @property {number} windowMs tokend's window, ms (0 before WELCOME)
 */

/**
 * @typedef {object} TokenGate
 * @property {(estMs: number) => Promise<void>} acquire wait until a batch of about estMs may run
 * @property {(usedMs: number) => void} release report the batch's measured time, ms
 * @property {() => void} close disconnect and release every waiter
 * @property {() => TokenGateStats} stats
 */

/** @param {string | number | undefined} device */
function deviceNumber(device) {
  if (device === undefined || device === 'cpu') return DEVICE_CPU;
  if (typeof device === 'number' && Number.isInteger(device) && device >= 0 && device < DEVICE_CPU) return device;
  const m = typeof device === 'string' ? /^gpu(\d+)$/.exec(device) : null;
  if (m) return Number(m[1]);
  throw new Error(`device: want "cpu", "gpuN" or N, got ${String(device)}`);
}

/**
 * @param {number} type
 * @param {number} device
 * @param {number} flags
 * @param {bigint[]} fields a, b, c, d
 */
function encode(type, device, flags, fields) {
  const b = Buffer.alloc(MSG_SIZE);
  b.writeUInt32LE(MAGIC, 0);
  b.writeUInt16LE(VERSION, 4);
  b.writeUInt16LE(type, 6);
  b.writeUInt32LE(device, 8);
  b.writeUInt32LE(flags, 12);
  fields.forEach((v, i) => b.writeBigUInt64LE(v < 0n ? 0n : v > U64_MAX ? U64_MAX : v, 16 + 8 * i));
  return b;
}

/** @param {number} ms */
const nsOf = (ms) => BigInt(Math.max(0, Math.round(ms * 1e6)));

/** @returns {TokenGate} */
function noopGate() {
  const zero = {
    enabled: false, connected: false, open: true, budgetMs: 0, acquired: 0, waited: 0, waitedMs: 0, grants: 0,
    grantedMs: 0, revokes: 0, usedMs: 0, connects: 0, disconnects: 0, failOpen: 0, windowMs: 0,
  };
  let acquired = 0;
  return {
    acquire: async () => { acquired++; },
    release: () => {},
    close: () => {},
    stats: () => ({ ...zero, acquired }),
  };
}

/**
 * Create a token gate for one device.
 * @param {TokenGateOptions} opts
 * @returns {TokenGate}
 */
function createTokenGate(opts) {
  const { socketPath, timeoutMs = 200, failClosed = false, reconnectMs = 100 } = opts || {};
  if (!socketPath) return noopGate();
  /** @type {string} */
  const sockPath = socketPath;
  const device = deviceNumber(opts.device);

  let budgetNs = 0; // tokens left in this window; may go negative (overdraft)
  let baseNs = 0; // budget right after the last refill, for usage reports
  let open = false;
  let closed = false;
  let connected = false;
  let sentBlocked = false;
  let blockedInWindow = false;
  let lastHeard = Date.now();
  let lastReport = Date.now();
  let batchesSinceReport = 0;
  /** @type {net.Socket | null} */
  let sock = null;
  let rbuf = Buffer.alloc(0);
  /** @type {{ resolve: () => void, since: number }[]} */
  const waiters = [];
  /** @type {number[]} estimates of admitted batches not yet released, ns */
  const outstanding = [];
  const st = {
    acquired: 0, waited: 0, waitedMs: 0, grants: 0, grantedMs: 0, revokes: 0, usedMs: 0, connects: 0,
    disconnects: 0, failOpen: 0, windowMs: 0,
  };

  /** @param {Buffer} b */
  const send = (b) => { if (sock && connected) sock.write(b); };

  /** @param {boolean} blocked */
  function sendAcquire(blocked) {
    const now = Date.now();
    const usedNs = Math.max(0, baseNs - budgetNs);
    const flags = blocked || blockedInWindow ? F_BLOCKED : 0;
    const want = flags ? U64_MAX : BigInt(Math.round(usedNs * 1.25));
    const klc = batchesSinceReport ? BigInt(Math.round(((now - lastReport) * 1e6) / batchesSinceReport)) : 0n;
    send(encode(ACQUIRE, device, flags, [BigInt(Math.round(usedNs)), want, BigInt(batchesSinceReport), klc]));
    batchesSinceReport = 0;
    lastReport = now;
  }

  function wakeWaiters() {
    while (waiters.length && (budgetNs >= 0 || open || closed)) {
      const w = /** @type {{ resolve: () => void, since: number }} */ (waiters.shift());
      st.waitedMs += Date.now() - w.since;
      w.resolve();
    }
    if (!waiters.length && sock) sock.unref();
  }

  function goOpen() {
    if (open || failClosed) return;
    open = true;
    st.failOpen++;
    wakeWaiters();
  }

  /** @param {Buffer} m */
  function onMessage(m) {
    if (m.readUInt32LE(0) !== MAGIC || m.readUInt16LE(4) !== VERSION) {
      sock?.destroy(new Error('tokend: bad magic or version'));
      return;
    }
    lastHeard = Date.now();
    const type = m.readUInt16LE(6);
    const a = Number(m.readBigUInt64LE(16));
    if (type === WELCOME) {
      st.windowMs = a / 1e6;
      baseNs = budgetNs;
      sendAcquire(waiters.length > 0);
    } else if (type === GRANT) {
      st.grants++;
      st.grantedMs += a / 1e6;
      if (!open && baseNs > budgetNs) st.usedMs += (baseNs - budgetNs) / 1e6;
      budgetNs = Math.min(budgetNs, 0) + a;
      if (open) budgetNs = a;
      baseNs = budgetNs;
      open = false;
      sendAcquire(false);
      sentBlocked = blockedInWindow = false;
      wakeWaiters();
    } else if (type === REVOKE) {
      st.revokes++;
      if (budgetNs > a) { baseNs -= budgetNs - a; budgetNs = a; }
    }
  }

  function connect() {
    if (closed) return;
    const s = net.createConnection(sockPath);
    sock = s;
    s.on('connect', () => {
      connected = true;
      st.connects++;
      rbuf = Buffer.alloc(0);
      s.write(encode(HELLO, device, 0, [0n, 0n, 0n, 0n]));
      if (!waiters.length) s.unref();
    });
    s.on('data', (chunk) => {
      rbuf = rbuf.length ? Buffer.concat([rbuf, chunk]) : chunk;
      while (rbuf.length >= MSG_SIZE) {
        onMessage(rbuf.subarray(0, MSG_SIZE));
        rbuf = rbuf.subarray(MSG_SIZE);
      }
    });
    s.on('error', () => {});
    s.on('close', () => {
      if (connected) st.disconnects++;
      connected = false;
      sock = null;
      if (!closed) setTimeout(connect, reconnectMs).unref();
    });
  }

  // Watchdog: fail open when tokend is silent while someone waits; report dry budgets.
  const watchdog = setInterval(() => {
    if (waiters.length && !sentBlocked && connected) {
      sentBlocked = blockedInWindow = true;
      sendAcquire(true);
    }
    if (Date.now() - lastHeard > timeoutMs && (waiters.length || !connected)) goOpen();
  }, Math.max(2, Math.min(20, timeoutMs / 4)));
  watchdog.unref();
  connect();

  return {
    acquire(estMs) {
      const est = Math.max(1000, estMs * 1e6);
      st.acquired++;
      batchesSinceReport++;
      outstanding.push(est);
      if (open) return Promise.resolve();
      const before = budgetNs;
      budgetNs -= est;
      if (before >= est) return Promise.resolve();
      st.waited++;
      return new Promise((resolve) => {
        waiters.push({ resolve, since: Date.now() });
        if (sock) sock.ref();
        if (connected && !sentBlocked) {
          sentBlocked = blockedInWindow = true;
          sendAcquire(true);
        }
      });
    },
    release(usedMs) {
      const est = outstanding.shift();
      if (est === undefined || open || !Number.isFinite(usedMs)) return;
      budgetNs -= Math.max(0, usedMs) * 1e6 - est; // correct the estimate with what the batch took
    },
    close() {
      closed = true;
      clearInterval(watchdog);
      sock?.destroy();
      wakeWaiters();
    },
    stats() {
      return { enabled: true, connected, open, budgetMs: budgetNs / 1e6, ...st };
    },
  };
}

module.exports = { createTokenGate, deviceNumber, MSG_SIZE, MAGIC, VERSION };
