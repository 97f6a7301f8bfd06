/** The words an event log shows for a decision of the mlfaas fixed-cluster controller. */
import type { ClusterView, JobAllocation } from '../types';
import type { Allocation } from './allocate';

const fmt = (x: number): string => (Math.round(x * 100) / 100).toString();

/** E.g. "normal z=1.8; a: 3×0.85 → 4×0.72 (queue 12)"; overload names the jobs not served. */
export function describe(view: ClusterView, jobs: ReadonlyArray<JobAllocation | null>, alloc: Allocation, guards: readonly number[]): string {
  const parts: string[] = [];
  view.jobs.forEach((j, i) => {
    const d = jobs[i];
    if (d === null) return;
    const n = d.replicas ?? j.replicas;
    const q = d.quota ?? j.quota;
    let s = `${j.name}: ${j.replicas}×${fmt(j.quota)} → ${n}×${fmt(q)}`;
    if (d.acceptRate !== undefined) s += ` accept ${fmt(d.acceptRate)}`;
    if (guards[i] > 0) s += ` (queue ${j.queueLength})`;
    parts.push(s);
  });
  const unserved = view.jobs.filter((_, i) => !alloc.served[i]).map((j) => j.name);
  const head = alloc.overload ? `overload, serving ${view.jobs.length - unserved.length}/${view.jobs.length} (not ${unserved.join(', ')})` : 'normal';
  return `${head} z=${fmt(alloc.z)}; ${parts.join('; ')}`;
}
