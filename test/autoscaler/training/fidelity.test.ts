/**
 * Fidelity against the authors' simulator on the artifact's data (read from the shared data
 * folder at run time; skipped where it is absent). EDF has no free design choices, so it must
 * reproduce the authors' rerun exactly; ElasticFlow (ours) must not fall below theirs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_DATA_DIR, loadClusterSpec, loadThroughputs, loadTrace } from '../../../autoscaler/sim/training/data';
import { buildSimJobs, runPolicy } from '../../../autoscaler/sim/training/run';

const dir = DEFAULT_DATA_DIR;
const maybe = existsSync(join(dir, 'results_rerun_here.csv')) ? describe : describe.skip;

maybe('fidelity to the ElasticFlow simulator', () => {
  test.each([
    // trace, cluster, slot, gpu, policy, authors' accepted (results_rerun_here.csv)
    { trace: 'traces_for_ElasticFlow/100jobs_1500lam.csv', cluster: 'n16g8', slot: 240, gpu: 'A100' as const, policy: 'edf', accepted: 92, exact: true },
    { trace: 'traces_for_ElasticFlow/elasticVpollux_e.csv', cluster: 'n16g4', slot: 60, gpu: 'T4' as const, policy: 'edf', accepted: 23, exact: true },
    { trace: 'elasticflow-traces/195job.csv', cluster: 'n16g8', slot: 240, gpu: 'A100' as const, policy: 'edf', accepted: 17, exact: true },
    { trace: 'traces_for_ElasticFlow/100jobs_1500lam.csv', cluster: 'n16g8', slot: 240, gpu: 'A100' as const, policy: 'elasticflow', accepted: 100, exact: false },
    { trace: 'traces_for_ElasticFlow/elasticVpollux_e.csv', cluster: 'n16g4', slot: 60, gpu: 'T4' as const, policy: 'elasticflow', accepted: 142, exact: false },
  ])('$policy on $trace ($cluster): authors accepted $accepted', ({ trace, cluster, slot, gpu, policy, accepted, exact }) => {
    const jobs = buildSimJobs(loadTrace(join(dir, trace)), loadThroughputs(dir, gpu), gpu);
    const r = runPolicy({ jobs, cluster: loadClusterSpec(dir, cluster), slotSeconds: slot, policy });
    if (exact) expect(r.accepted).toBe(accepted);
    else expect(r.accepted).toBeGreaterThanOrEqual(accepted);
  });
});
