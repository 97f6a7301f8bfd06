import type { FaroSimConfig } from './config';
import type { EventQueue } from './event-queue';
import { drawLogNorm, type NormalSource, type UniformSource } from './random';
import type { SharePool } from './shares';

/** Event kinds packed in the low 3 bits of a payload; the index is payload >> 3. */
export const EV = { ARRIVAL: 0, ROUTER: 1, SERVICE: 2, START: 3, TICK: 4, MONITOR: 5, RETRY: 6, HOLD: 7 } as const;

/** What every job's data plane shares: the clock, the event queue, the random streams, the request table. */
export interface SimCore {
  now: number;
  readonly q: EventQueue;
  readonly cfg: FaroSimConfig;
  /** Service and proxy times (the artifact's global np.random: one stream for both). */
  readonly routeRng: NormalSource;
  readonly serviceRng: NormalSource;
  /** The drop test and the replica order (the artifact's Python `random`: one stream for both). */
  readonly dropRng: UniformSource;
  readonly orderRng: UniformSource;
  readonly replicaById: Replica[];
  /** With `cfg.cpu` 'shares': the work-conserving pool of each node the replicas' services run in. */
  readonly shares?: SharePool[];
  /** Marks request `req` dropped (it still passes the proxy once more on its way out). */
  markDropped(req: number): void;
  /** Called when request `req` leaves the system (served or dropped). */
  finish(req: number): void;
}

/** A pod: one unit (times the job's quota) that holds at most one replica. */
export interface Worker {
  replica: Replica | null;
  idleSince: number;
  /** The node it was placed on (`cfg.cpu` 'shares'; 0 otherwise). */
  node: number;
}

/** A replica: serves the requests assigned to it one at a time, in order. */
export interface Replica {
  readonly id: number;
  readonly job: number;
  readonly queue: number[];
  busy: boolean;
  /** Assigned and not yet served (≤ maxConcurrent). */
  inflight: number;
  /** Removed: takes no new request, finishes what it holds. */
  stopped: boolean;
  worker: Worker | null;
  readonly node: number;
  /** `cfg.cpu` 'shares' only: remaining work (s at speed 1), speed, since when, and the completion due. */
  work: number;
  speed: number;
  since: number;
  dueAt: number;
}

/**
 * One job's data plane, as the artifact's `Cluster` + `InferenceModel` + replicas: a single-server
 * HTTP proxy every request passes twice (arrival and response, each a route-latency draw), the
 * accept-rate and tail drop, one FIFO queue, and a scheduler that hands the head request to the next
 * replica in a shuffled round robin that has fewer than `maxConcurrent` assigned (or, with
 * `cfg.router` 'leastOutstanding', to the one with the fewest assigned). When none has, the
 * scheduler holds that request and waits for one of the job's requests to finish: a replica that
 * has just started does not wake it.
 */
export class JobPlane {
  /** Started replicas, in order of start (a downscale removes the last). */
  readonly replicas: Replica[] = [];
  acceptRate = 1;
  quota = 1;
  droppedSinceTick = 0;
  private router: Int32Array = new Int32Array(256);
  private rHead = 0;
  private rLen = 0;
  private routerBusy = false;
  private readonly mq: number[] = [];
  private mqHead = 0;
  private blocked = false;
  private cycle: Replica[] = [];
  private ptr = 0;

  constructor(private readonly core: SimCore, readonly index: number) {}

  get queueLength(): number {
    return this.mq.length - this.mqHead - (this.blocked ? 1 : 0);
  }

  get inFlight(): number {
    let s = 0;
    for (const r of this.replicas) s += r.inflight;
    return s;
  }

  /** A request arrives at the proxy. */
  arrive(req: number): void {
    this.routerPush(req * 2);
  }

  /** The proxy finished one pass. */
  onRouterDone(): void {
    const code = this.router[this.rHead];
    this.rHead = (this.rHead + 1) % this.router.length;
    this.rLen--;
    this.routerBusy = false;
    let queued = false;
    if ((code & 1) === 1) this.core.finish(code >> 1);
    else queued = this.handle(code >> 1);
    // SimPy's order at this instant: the proxy takes its next pass (route draw) before the job's
    // scheduler wakes up for the request just queued (which then starts a service)
    if (this.rLen > 0 && !this.routerBusy) this.startRouter();
    if (queued) this.schedule();
  }

  onServiceDone(r: Replica): void {
    const req = r.queue.shift()!;
    r.busy = false;
    r.inflight--;
    // SimPy's order at this instant: the replica takes its next request (service draw) before the
    // proxy's get of the finished one resumes (route draw), and the blocked scheduler comes last
    if (r.queue.length > 0) this.startService(r);
    this.routerPush(req * 2 + 1);
    if (this.blocked) {
      this.blocked = false;
      this.schedule();
    }
  }

  /** New replica order after the set of replicas changed (the artifact reshuffles on every change). */
  resetCycle(): void {
    this.cycle = this.core.orderRng.shuffle(this.replicas.slice());
    this.ptr = 0;
  }

  /** The artifact's handle(): drop test, then the job's queue; true when queued (the caller schedules). */
  private handle(req: number): boolean {
    const core = this.core;
    // as the artifact's handle(): one `random.random()` per request, whatever the drop rate
    const u = core.dropRng.uniform();
    const rejected = u < 1 - this.acceptRate || this.queueLength > core.cfg.maxQueueLen;
    if (rejected) {
      this.droppedSinceTick++;
      core.markDropped(req);
      this.routerPush(req * 2 + 1);
      return false;
    }
    this.mq.push(req);
    return true;
  }

  private schedule(): void {
    if (this.blocked) return;
    while (this.mq.length > this.mqHead) {
      const r = this.assign();
      if (r === null) {
        this.blocked = true;
        return;
      }
      const req = this.mq[this.mqHead++];
      if (this.mqHead > 1024 && this.mqHead * 2 > this.mq.length) {
        this.mq.splice(0, this.mqHead);
        this.mqHead = 0;
      }
      r.inflight++;
      r.queue.push(req);
      if (!r.busy) this.startService(r);
    }
  }

  private assign(): Replica | null {
    if (this.core.cfg.router === 'leastOutstanding') return this.assignLeastOutstanding();
    const n = this.replicas.length;
    const c = this.cycle;
    const max = this.core.cfg.maxConcurrent;
    for (let k = 0; k < n && c.length > 0; k++) {
      const r = c[this.ptr];
      this.ptr = (this.ptr + 1) % c.length;
      if (r.inflight < max) return r;
    }
    return null;
  }

  /** The gateway's rule: fewest assigned below the cap; the first such in cycle order from the pointer wins a tie. */
  private assignLeastOutstanding(): Replica | null {
    const c = this.cycle;
    const len = c.length;
    const n = Math.min(this.replicas.length, len);
    const max = this.core.cfg.maxConcurrent;
    let best = -1;
    let bestLoad = max;
    for (let k = 0; k < n; k++) {
      const i = (this.ptr + k) % len;
      const load = c[i].inflight;
      if (load < bestLoad) {
        best = i;
        bestLoad = load;
        if (load === 0) break;
      }
    }
    if (best < 0) return null;
    this.ptr = (best + 1) % len;
    return c[best];
  }

  private startService(r: Replica): void {
    r.busy = true;
    const core = this.core;
    const draw = drawLogNorm(core.serviceRng, core.cfg.service);
    if (core.shares) {
      core.shares[r.node].start(r, draw, core.now);
      return;
    }
    core.q.push(core.now + draw / this.quota, EV.SERVICE | (r.id << 3));
  }

  private routerPush(code: number): void {
    if (this.rLen === this.router.length) {
      const b = new Int32Array(this.router.length * 2);
      for (let i = 0; i < this.rLen; i++) b[i] = this.router[(this.rHead + i) % this.router.length];
      this.router = b;
      this.rHead = 0;
    }
    this.router[(this.rHead + this.rLen) % this.router.length] = code;
    this.rLen++;
    if (!this.routerBusy) this.startRouter();
  }

  private startRouter(): void {
    this.routerBusy = true;
    const core = this.core;
    core.q.push(core.now + drawLogNorm(core.routeRng, core.cfg.route), EV.ROUTER | (this.index << 3));
  }
}
