/**
 * Client for tokend's control socket (root-only unix socket, one JSON object
 * per line, one JSON reply per line; see native/tokend/control.c).
 * Used by the node agent / local provider to set replicas' time quotas.
 */
import * as net from 'node:net';

/** A GPU index, `"gpuN"`, or `"cpu"` for the CPU device. */
export type TokendDevice = 'cpu' | `gpu${number}` | number;

/** Which clients a quota applies to: exactly one key is needed; the most specific wins (clientId > pid > cgroup). */
export interface QuotaTarget {
  /** process id of the replica (matched against SO_PEERCRED) */
  pid?: number;
  /** tokend's id of one connection (from {@link TokendStats}) */
  clientId?: number;
  /** cgroup path prefix (from /proc/<pid>/cgroup) */
  cgroup?: string;
  /** device the quota is for */
  device: TokendDevice;
}

/** A `<request, limit>` time quota, both fractions of the device per window (0..1). */
export interface Quota extends QuotaTarget {
  /** guaranteed fraction of each window (0..limit) */
  request: number;
  /** the most the client may get per window (0 < limit <= 1) */
  limit: number;
  /** an LLM client (tokend --policy dilu: its minKLC and EMERGENCY threshold differ) */
  llm?: boolean;
}

/** One connected client as tokend sees it. */
export interface TokendClientStats {
  id: number;
  pid: number;
  uid: number;
  cgroup: string;
  device: string;
  slo: boolean;
  /** the quota's request and limit in the client's unit: times its SM share (below) */
  request: number;
  limit: number;
  /** the MPS SM share the client reported (1: none); its time and quota count this much of the device */
  smShare: number;
  /** Dilu Algorithm 2 state of the client's last window */
  state: 'NONE' | 'CONTENTION' | 'RECOVERY' | 'EMERGENCY';
  /** grant of the last window, ns */
  lastGrantNs: number;
  /** total granted, ns */
  grantedNs: number;
  /** total reported used, ns */
  usedNs: number;
  /** kernel launches (GPU) or batches (CPU) reported */
  launches: number;
}

/** tokend --policy dilu: Dilu's RCKM state of one device. */
export interface RckmStats {
  device: string;
  /** the conservative limit C, a fraction of UPPER (the whole device) */
  c: number;
  /** the low-priority clients' total L, a fraction of the device */
  low: number;
  /** kernel launch cycles of high-priority clients ended on the device */
  cycles: number;
}

export interface TokendStats {
  /** the window plan in use */
  policy?: 'default' | 'dilu';
  /** per device, with --policy dilu */
  rckm?: RckmStats[];
  /** window length, ns */
  windowNs: number;
  /** windows elapsed since start */
  windowSeq: number;
  gpus: number;
  clients: TokendClientStats[];
}

/** Reply to SET_QUOTA / REMOVE. */
export interface QuotaResult {
  /** connected clients whose quota changed (SET_QUOTA) */
  applied?: number;
  /** rules removed (REMOVE) */
  removed?: number;
  /** tokend's CLOCK_MONOTONIC when the change took effect, ns (same clock as process.hrtime.bigint()) */
  monoNs: number;
}

export class TokendControlError extends Error {
  constructor(
    message: string,
    readonly code: 'TOKEND_REJECTED' | 'TOKEND_UNREACHABLE' | 'TOKEND_TIMEOUT' | 'TOKEND_BAD_REPLY',
  ) {
    super(message);
    this.name = 'TokendControlError';
  }
}

export interface TokendControl {
  setQuota(q: Quota): Promise<QuotaResult>;
  remove(t: QuotaTarget): Promise<QuotaResult>;
  stats(): Promise<TokendStats>;
}

export interface TokendControlOptions {
  /** per-request timeout, ms (default 2000) */
  timeoutMs?: number;
}

function validateQuota(q: Quota): void {
  if (!(q.limit > 0 && q.limit <= 1)) throw new RangeError(`limit: want (0, 1], got ${q.limit}`);
  if (!(q.request >= 0 && q.request <= q.limit)) throw new RangeError(`request: want [0, limit], got ${q.request}`);
  if (q.pid === undefined && q.clientId === undefined && q.cgroup === undefined) {
    throw new RangeError('pid | clientId | cgroup: one is required');
  }
}

/**
 * Sends one request line; resolves with the parsed reply. tokend reads a control connection for
 * 100 ms at most (a silent peer must not stall its windows): on a busy machine the line can
 * arrive later, and tokend has closed the connection unread (EPIPE / ECONNRESET, no reply). Every
 * request is idempotent (set a quota, remove a rule, read stats), so such a drop is retried, twice.
 */
async function request(controlPath: string, body: object, timeoutMs: number): Promise<Record<string, unknown>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await requestOnce(controlPath, body, timeoutMs);
    } catch (e) {
      if (!(e instanceof DroppedUnread) || attempt >= 3) throw e;
    }
  }
}

class DroppedUnread extends TokendControlError {}

function requestOnce(controlPath: string, body: object, timeoutMs: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(controlPath);
    let buf = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new TokendControlError(`tokend control ${controlPath}: no reply in ${timeoutMs} ms`, 'TOKEND_TIMEOUT'));
    }, timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`${JSON.stringify(body)}\n`));
    sock.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      sock.destroy();
      let reply: Record<string, unknown>;
      try {
        reply = JSON.parse(buf.slice(0, nl)) as Record<string, unknown>;
      } catch {
        reject(new TokendControlError(`tokend control: unparsable reply ${buf.slice(0, 200)}`, 'TOKEND_BAD_REPLY'));
        return;
      }
      if (reply.ok !== true) reject(new TokendControlError(String(reply.error ?? 'rejected'), 'TOKEND_REJECTED'));
      else resolve(reply);
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      const code = (e as NodeJS.ErrnoException).code;
      const Err = buf === '' && (code === 'EPIPE' || code === 'ECONNRESET') ? DroppedUnread : TokendControlError;
      reject(new Err(`tokend control ${controlPath}: ${e.message}`, 'TOKEND_UNREACHABLE'));
    });
    // closed with no reply and no error (tokend closed first; our line went nowhere): a drop too
    sock.on('close', () => {
      clearTimeout(timer);
      const Err = buf === '' ? DroppedUnread : TokendControlError;
      if (buf.indexOf('\n') < 0) reject(new Err(`tokend control ${controlPath}: closed without a reply`, 'TOKEND_UNREACHABLE'));
    });
  });
}

function target(t: QuotaTarget): Record<string, unknown> {
  const out: Record<string, unknown> = { device: t.device };
  if (t.pid !== undefined) out.pid = t.pid;
  if (t.clientId !== undefined) out.clientId = t.clientId;
  if (t.cgroup !== undefined) out.cgroup = t.cgroup;
  return out;
}

/** A client for the control socket at `controlPath`. Each call opens one short connection. */
export function createTokendControl(controlPath: string, opts: TokendControlOptions = {}): TokendControl {
  const timeoutMs = opts.timeoutMs ?? 2000;
  return {
    async setQuota(q) {
      validateQuota(q);
      const r = await request(controlPath, { op: 'SET_QUOTA', ...target(q), request: q.request, limit: q.limit, ...(q.llm ? { llm: 1 } : {}) }, timeoutMs);
      return { applied: Number(r.applied), monoNs: Number(r.monoNs) };
    },
    async remove(t) {
      const r = await request(controlPath, { op: 'REMOVE', ...target(t) }, timeoutMs);
      return { removed: Number(r.removed), monoNs: Number(r.monoNs) };
    },
    async stats() {
      const r = await request(controlPath, { op: 'STATS' }, timeoutMs);
      return {
        windowNs: Number(r.windowNs),
        windowSeq: Number(r.windowSeq),
        gpus: Number(r.gpus),
        clients: (r.clients as TokendClientStats[]) ?? [],
        policy: r.policy === 'dilu' ? 'dilu' : 'default',
        ...(Array.isArray(r.rckm) ? { rckm: r.rckm as RckmStats[] } : {}),
      };
    },
  };
}
