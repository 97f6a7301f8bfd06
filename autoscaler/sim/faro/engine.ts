import type { ClusterController, ControllerDecision } from '../../multitenant/types';
import type { FaroSimConfig } from './config';
import { EventQueue } from './event-queue';
import { ControlPlane } from './executor';
import { EV, JobPlane, type Replica, type SimCore } from './job';
import { faroStreams, type FaroStreams } from './random';
import { sharePools } from './shares';
import { JobWindow, buildView } from './view';

/** Everything one run leaves behind: per request its job, arrival, end, and whether it was dropped. */
export interface SimRecord {
  readonly jobNames: readonly string[];
  readonly job: Uint8Array;
  readonly arrival: Float64Array;
  readonly end: Float64Array;
  readonly dropped: Uint8Array;
  /** Controller ticks run and decisions applied. */
  readonly ticks: number;
  readonly decisions: number;
}

export interface SimInput {
  readonly cfg: FaroSimConfig;
  readonly jobNames: readonly string[];
  /** Sorted arrival times (s) per job. */
  readonly arrivals: readonly Float64Array[];
  readonly controller: ClusterController;
  /** Replicas each job starts with (started at t = 0, no start delay). */
  readonly initialReplicas: readonly number[];
  readonly seed: number;
  /** Called after every applied decision (tests, logs). */
  readonly onDecision?: (nowS: number, d: ControllerDecision) => void;
  /** Random streams (default `faroStreams(seed)`); tests pass wrapped ones to see the draw order. */
  readonly streams?: FaroStreams;
}

/** A MONITOR event with this index lets the executors pick up the actions of the tick (no free event kind is left). */
const KICK = 1;

/**
 * A minute's first request (at exactly 60·m) comes from a load process that SimPy starts at that
 * instant with URGENT priority, in the trace's job order, so those run before anything else then and
 * in job order; other arrivals keep the insertion order.
 */
function pushArrival(q: EventQueue, t: number, j: number, nJobs: number): void {
  q.push(t, EV.ARRIVAL | (j << 3), t % 60 === 0 ? j - nJobs - 1 : undefined);
}

/**
 * Runs one simulation to the end (every request served or dropped) and returns the request record.
 * The controller is called every `tickS` from t = tickS; its allocations go to the jobs' executors.
 */
export function runFaroSim(input: SimInput): SimRecord {
  const { cfg, arrivals, controller } = input;
  const nJobs = arrivals.length;
  let total = 0;
  for (const a of arrivals) total += a.length;
  const job = new Uint8Array(total);
  const arrival = new Float64Array(total);
  const end = new Float64Array(total);
  const dropped = new Uint8Array(total);
  const windows = arrivals.map(() => new JobWindow(cfg.lookBackS));
  const arrivalsWin = arrivals.map(() => new JobWindow(cfg.lookBackS));
  let done = 0;
  const streams = input.streams ?? faroStreams(input.seed);
  const q0 = new EventQueue();
  const core: SimCore = {
    now: 0,
    q: q0,
    cfg,
    routeRng: streams.route,
    serviceRng: streams.service,
    dropRng: streams.python,
    orderRng: streams.python,
    replicaById: [] as Replica[],
    shares:
      cfg.cpu === 'shares'
        ? sharePools(q0, cfg.capacity, cfg.nodeUnits, (j) => planes[j].quota, (id) => EV.SERVICE | (id << 3))
        : undefined,
    markDropped: (req) => {
      dropped[req] = 1;
    },
    finish: (req) => {
      end[req] = core.now;
      windows[job[req]].add(core.now, (core.now - arrival[req]) * 1e3);
      done++;
    },
  };
  const planes = arrivals.map((_, j) => new JobPlane(core, j));
  const control = new ControlPlane(core, planes);
  for (let j = 0; j < nJobs; j++) control.deploy(j, Math.max(1, input.initialReplicas[j] ?? 1));

  const next = new Int32Array(nJobs);
  const minuteCounts: number[][] = arrivals.map(() => []);
  let reqId = 0;
  for (let j = 0; j < nJobs; j++) if (arrivals[j].length > 0) pushArrival(core.q, arrivals[j][0], j, nJobs);
  core.q.push(controller.tickS, EV.TICK);
  core.q.push(cfg.monitorIntervalS, EV.MONITOR);
  let ticks = 0;
  let decisions = 0;

  while (core.q.size > 0 && done < total) {
    core.now = core.q.peekTime();
    const ev = core.q.pop();
    const idx = ev >> 3;
    switch (ev & 7) {
      case EV.ARRIVAL: {
        const t = arrivals[idx][next[idx]++];
        const id = reqId++;
        job[id] = idx;
        arrival[id] = t;
        const m = Math.floor(t / 60);
        const mc = minuteCounts[idx];
        while (mc.length <= m) mc.push(0);
        mc[m]++;
        arrivalsWin[idx].add(t, 0);
        planes[idx].arrive(id);
        if (next[idx] < arrivals[idx].length) pushArrival(core.q, arrivals[idx][next[idx]], idx, nJobs);
        break;
      }
      case EV.ROUTER:
        planes[idx].onRouterDone();
        break;
      case EV.SERVICE: {
        const r = core.replicaById[idx];
        if (core.shares) {
          const pool = core.shares[r.node];
          if (!pool.isDue(r, core.now)) break; // superseded by a speed change
          pool.stop(r, core.now);
        }
        planes[r.job].onServiceDone(r);
        break;
      }
      case EV.START:
        control.onStart(idx);
        break;
      case EV.RETRY:
        control.onRetry(idx);
        break;
      case EV.HOLD:
        control.onHoldDone(idx);
        break;
      case EV.MONITOR:
        if (idx === KICK) {
          control.kick();
          break;
        }
        control.monitor();
        core.q.push(core.now + cfg.monitorIntervalS, EV.MONITOR);
        break;
      case EV.TICK: {
        ticks++;
        const view = buildView(core.now, cfg, input.jobNames, planes, control, windows, minuteCounts, arrivalsWin);
        const d = controller.tick(view);
        for (const p of planes) p.droppedSinceTick = 0;
        if (d !== null) {
          decisions++;
          applyDecision(d, planes, control, cfg);
          if (core.shares) for (const pool of core.shares) pool.reweigh(core.now);
          input.onDecision?.(core.now, d);
        }
        // The executors pick the actions up after every event already due at this instant (the idle
        // monitor, backoff retries, starts): in SimPy an action reaches its executor through a put
        // and a get, two events scheduled now, behind those.
        if (d !== null) core.q.push(core.now, EV.MONITOR | (KICK << 3));
        core.q.push(core.now + controller.tickS, EV.TICK);
        break;
      }
    }
  }
  return { jobNames: input.jobNames, job, arrival, end, dropped, ticks, decisions };
}

function applyDecision(d: ControllerDecision, planes: JobPlane[], control: ControlPlane, cfg: FaroSimConfig): void {
  d.jobs.forEach((a, j) => {
    if (a === null || a === undefined || j >= planes.length) return;
    if (a.quota !== undefined) planes[j].quota = a.quota;
    if (a.acceptRate !== undefined && !cfg.acceptRateOnlyWithReplicaChange) planes[j].acceptRate = a.acceptRate;
    if (a.replicas !== undefined || (a.acceptRate !== undefined && cfg.acceptRateOnlyWithReplicaChange)) {
      const target = a.replicas ?? planes[j].replicas.length;
      control.enqueue(j, { target: Math.max(0, Math.round(target)), acceptRate: cfg.acceptRateOnlyWithReplicaChange ? a.acceptRate : undefined });
    }
  });
}
