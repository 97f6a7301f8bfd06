import { EV, type JobPlane, type Replica, type SimCore, type Worker } from './job';

/** One scaling action for a job, as the artifact's executor receives it. */
export interface ScaleAction {
  readonly target: number;
  readonly acceptRate?: number;
}

interface StartBatch {
  readonly job: number;
  readonly replicas: Replica[];
}

interface ExecState {
  readonly actions: ScaleAction[];
  working: boolean;
  current: ScaleAction | null;
  /** Replicas of the current upscale not yet given a pod. */
  left: number;
  /** Start batches of the current upscale not yet started. */
  pendingStarts: number;
  /** Replicas with a pod, not yet started. */
  starting: number;
}

/**
 * The cluster's control plane, as the artifact's pods, idle monitor and per-job autoscale executor:
 * a job's pods (each one unit × the job's quota, at most one replica each), a new pod only while the
 * cluster has room, an idle pod of the same job reused first (hot start) and reclaimed after the idle
 * timeout (never below `minWorkers` pods). Each job's executor runs its actions one at a time: an
 * upscale takes the pods it can, retries the rest every `upscaleBackoffS` until it has them all and
 * is busy until every new replica has started; a downscale removes the last replicas at once and is
 * busy `downscaleHoldS` more. The accept rate is applied when an action that changed the count ends.
 */
export class ControlPlane {
  readonly workers: Worker[][];
  private readonly exec: ExecState[];
  private readonly batches: (StartBatch | null)[] = [];
  private nextReplicaId = 0;

  constructor(private readonly core: SimCore, private readonly jobs: JobPlane[]) {
    this.workers = jobs.map(() => []);
    this.exec = jobs.map(() => ({ actions: [], working: false, current: null, left: 0, pendingStarts: 0, starting: 0 }));
  }

  /** Units in use (pods × their job's quota). */
  usedUnits(): number {
    let u = 0;
    for (let j = 0; j < this.jobs.length; j++) u += this.workers[j].length * this.jobs[j].quota;
    return u;
  }

  /** The run's initial state: `minWorkers` pods per job, then `n` replicas started at once. */
  deploy(job: number, n: number): void {
    for (let i = 0; i < this.core.cfg.minWorkers; i++) this.createPod(job);
    for (let i = 0; i < n; i++) {
      const got = this.requestWorker(job);
      if (got === null) throw new Error(`no room for the initial replicas of job ${job}`);
      this.startReplica(this.newReplica(job, got.worker));
    }
    this.jobs[job].resetCycle();
  }

  isWorking(job: number): boolean {
    return this.exec[job].working || this.exec[job].actions.length > 0;
  }

  startingReplicas(job: number): number {
    return this.exec[job].starting;
  }

  enqueue(job: number, action: ScaleAction): void {
    this.exec[job].actions.push(action);
  }

  /** Starts the next queued action of every idle executor. */
  kick(): void {
    for (let j = 0; j < this.jobs.length; j++) this.next(j);
  }

  /** Reclaims pods idle for `idleTimeoutS` (the artifact's 5-s cluster monitor). */
  monitor(): void {
    const { idleTimeoutS, minWorkers } = this.core.cfg;
    const now = this.core.now;
    for (let j = 0; j < this.jobs.length; j++) {
      const ws = this.workers[j];
      const idle = ws.filter((w) => w.replica === null && now - w.idleSince >= idleTimeoutS);
      for (const w of idle) {
        if (ws.length <= minWorkers) break;
        ws.splice(ws.indexOf(w), 1);
      }
    }
  }

  onStart(batchId: number): void {
    const b = this.batches[batchId]!;
    this.batches[batchId] = null;
    const st = this.exec[b.job];
    for (const r of b.replicas) this.startReplica(r);
    st.starting -= b.replicas.length;
    this.jobs[b.job].resetCycle();
    st.pendingStarts--;
    this.maybeDone(b.job);
  }

  onRetry(job: number): void {
    this.acquire(job);
  }

  onHoldDone(job: number): void {
    this.finishAction(job);
  }

  private next(job: number): void {
    const st = this.exec[job];
    while (!st.working && st.actions.length > 0) {
      const a = st.actions.shift()!;
      const plane = this.jobs[job];
      const delta = a.target - plane.replicas.length;
      if (delta === 0) continue;
      st.working = true;
      st.current = a;
      if (delta > 0) {
        st.left = delta;
        st.pendingStarts = 0;
        this.acquire(job);
      } else {
        for (let i = 0; i < -delta && plane.replicas.length > 0; i++) {
          const r = plane.replicas.pop()!;
          r.stopped = true;
          const w = r.worker!;
          w.replica = null;
          w.idleSince = this.core.now;
          r.worker = null;
        }
        plane.resetCycle();
        this.core.q.push(this.core.now + this.core.cfg.downscaleHoldS, EV.HOLD | (job << 3));
      }
    }
  }

  private acquire(job: number): void {
    const st = this.exec[job];
    const hot: Replica[] = [];
    const cold: Replica[] = [];
    while (st.left > 0) {
      const got = this.requestWorker(job);
      if (got === null) break;
      (got.hot ? hot : cold).push(this.newReplica(job, got.worker));
      st.left--;
    }
    const cfg = this.core.cfg;
    const now = this.core.now;
    if (hot.length > 0) this.scheduleStart(job, hot, now + cfg.hotStartS);
    if (cold.length > 0) this.scheduleStart(job, cold, now + cfg.coldStartS);
    st.starting += hot.length + cold.length;
    if (st.left > 0) this.core.q.push(now + cfg.upscaleBackoffS, EV.RETRY | (job << 3));
    else this.maybeDone(job);
  }

  private maybeDone(job: number): void {
    const st = this.exec[job];
    if (st.working && st.left === 0 && st.pendingStarts === 0) this.finishAction(job);
  }

  private finishAction(job: number): void {
    const st = this.exec[job];
    const a = st.current;
    if (a !== null && a.acceptRate !== undefined) this.jobs[job].acceptRate = a.acceptRate;
    st.current = null;
    st.working = false;
    this.next(job);
  }

  private scheduleStart(job: number, replicas: Replica[], at: number): void {
    this.batches.push({ job, replicas });
    this.exec[job].pendingStarts++;
    this.core.q.push(at, EV.START | ((this.batches.length - 1) << 3));
  }

  private requestWorker(job: number): { worker: Worker; hot: boolean } | null {
    for (const w of this.workers[job]) if (w.replica === null) return { worker: w, hot: true };
    if (this.usedUnits() + this.jobs[job].quota > this.core.cfg.capacity + 1e-9) return null;
    return { worker: this.createPod(job), hot: false };
  }

  private createPod(job: number): Worker {
    const w: Worker = { replica: null, idleSince: this.core.now, node: this.placeNode() };
    this.workers[job].push(w);
    return w;
  }

  /** With work-conserving shares: the node with the most units free (the first on a tie); else 0. */
  private placeNode(): number {
    const pools = this.core.shares;
    if (!pools || pools.length <= 1) return 0;
    const free = pools.map((p) => p.capacity);
    for (let j = 0; j < this.jobs.length; j++) for (const w of this.workers[j]) free[w.node] -= this.jobs[j].quota;
    let best = 0;
    for (let k = 1; k < free.length; k++) if (free[k] > free[best] + 1e-9) best = k;
    return best;
  }

  private newReplica(job: number, worker: Worker): Replica {
    const r: Replica = {
      id: this.nextReplicaId++, job, queue: [], busy: false, inflight: 0, stopped: false, worker, node: worker.node,
      work: 0, speed: 0, since: 0, dueAt: -1,
    };
    worker.replica = r;
    this.core.replicaById[r.id] = r;
    return r;
  }

  private startReplica(r: Replica): void {
    this.jobs[r.job].replicas.push(r);
  }
}
