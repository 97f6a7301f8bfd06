import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { InstanceType, SchedInstance } from '../../reproductions/dilu/cluster';

/**
 * Dilu's scheduling-simulator input (`../shared/data/traces/dilu_sched_events/instances-N.jsonl`):
 * one JSON object a line, `{ Time: 'YYYY-MM-DD HH:MM:SS', Action: 'start' | 'delete', Instance:
 * { service_name, type, gpu_num, sm_requests, sm_limits, memory: [GB per GPU] } }`, in time order.
 */
export interface SchedEvent {
  /** Seconds since the first event. */
  readonly t: number;
  readonly action: 'start' | 'delete';
  readonly inst: SchedInstance;
}

const TYPES: readonly InstanceType[] = ['inference', 'llm-inference', 'training'];

function toSeconds(time: string): number {
  const ms = Date.parse(time.replace(' ', 'T') + 'Z');
  if (!Number.isFinite(ms)) throw new Error(`dilu-sched: bad Time '${time}'`);
  return ms / 1000;
}

/** Parses the lines of an events file; throws with the line number on a malformed line. */
export function parseSchedEvents(text: string): SchedEvent[] {
  const out: SchedEvent[] = [];
  let t0: number | undefined;
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const o = JSON.parse(line) as { Time: string; Action: string; Instance: Record<string, unknown> };
    const ins = o.Instance;
    const type = ins.type as InstanceType;
    if (!TYPES.includes(type) || (o.Action !== 'start' && o.Action !== 'delete')) throw new Error(`dilu-sched: line ${i + 1}: bad type or action`);
    const t = toSeconds(o.Time);
    t0 ??= t;
    out.push({
      t: t - t0,
      action: o.Action,
      inst: {
        name: String(ins.service_name),
        type,
        gpuNum: Number(ins.gpu_num),
        smRequest: Number(ins.sm_requests),
        smLimit: Number(ins.sm_limits),
        memoryGb: (ins.memory as number[]).map(Number),
      },
    });
  });
  return out;
}

/** The instance counts the data has. */
export const INSTANCE_COUNTS = [100, 200, 400, 800, 1600, 3200] as const;

/** `../shared/data/traces/dilu_sched_events` beside the repository root (read at run time, never copied). */
export const SCHED_EVENTS_DIR = resolve(__dirname, '../../../../shared/data/traces/dilu_sched_events');

/** Reads `instances-N.jsonl` from `dir`. */
export function loadSchedEvents(n: number, dir = SCHED_EVENTS_DIR): SchedEvent[] {
  return parseSchedEvents(readFileSync(`${dir}/instances-${n}.jsonl`, 'utf8'));
}
