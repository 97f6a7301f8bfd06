/**
 * Benchmark cases: the ElasticFlow artifact's traces with the cluster, slot and GPU type the
 * authors simulated them on, and the authors' numbers to compare against. Reference values come
 * from `results_rerun_here.csv` (the authors' simulator rerun here) where it has a final ratio,
 * else from the paper (Fig. 8(b), `plot_figure/scripts/plot_fig8b.py`, quoted in the data README).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface BenchCase {
  readonly name: string;
  /** Path relative to the data dir. */
  readonly trace: string;
  readonly cluster: string;
  readonly slot: number;
  readonly gpu: 'A100' | 'T4';
  /** Name in results_rerun_here.csv. */
  readonly csvTrace: string;
  /** Published ElasticFlow / baseline ratios (paper), used when the rerun has no final value. */
  readonly published?: Readonly<Record<string, number>>;
}

// Fig. 8(b) published values, order cluster01..10 in the README: index 0 = cluster01.
const fig8b = (i: number) => ({
  'ef-accessctrl': [0.788, 0.822, 0.455, 0.631, 0.832, 0.607, 0.665, 0.896, 0.938, 0.981][i],
  edf: [0.182, 0.228, 0.095, 0.007, 0.375, 0.105, 0.046, 0.252, 0.8, 0.769][i],
  gandiva: [0.246, 0.286, 0.314, 0.228, 0.228, 0.381, 0.351, 0.325, 0.329, 0.354][i],
  'dlas-gpu': [0.478, 0.47, 0.401, 0.12, 0.42, 0.466, 0.346, 0.373, 0.468, 0.473][i],
  themis: [0.464, 0.431, 0.389, 0.432, 0.43, 0.425, 0.437, 0.423, 0.456, 0.431][i],
});

export const CASES: readonly BenchCase[] = [
  { name: 'fig10 100jobs_1500lam', trace: 'traces_for_ElasticFlow/100jobs_1500lam.csv', cluster: 'n16g8', slot: 240, gpu: 'A100',
    csvTrace: '100jobs_1500lam.csv' },
  { name: 'fig8a elasticVpollux_e', trace: 'traces_for_ElasticFlow/elasticVpollux_e.csv', cluster: 'n16g4', slot: 60, gpu: 'T4',
    csvTrace: 'elasticVpollux_e.csv' },
  { name: 'cluster01', trace: 'elasticflow-traces/cluster01.csv', cluster: 'n64g8', slot: 60, gpu: 'A100', csvTrace: 'cluster01.csv', published: fig8b(0) },
  { name: 'cluster02', trace: 'elasticflow-traces/cluster02.csv', cluster: 'n64g8', slot: 60, gpu: 'A100', csvTrace: 'cluster02.csv', published: fig8b(1) },
  { name: 'cluster05', trace: 'elasticflow-traces/cluster05.csv', cluster: 'n64g8', slot: 60, gpu: 'A100', csvTrace: 'cluster05.csv', published: fig8b(4) },
  { name: 'cluster09', trace: 'elasticflow-traces/cluster09.csv', cluster: 'n128g8', slot: 60, gpu: 'A100', csvTrace: 'cluster09.csv', published: fig8b(8) },
  { name: 'cluster10', trace: 'elasticflow-traces/cluster10.csv', cluster: 'n32g8', slot: 60, gpu: 'A100', csvTrace: 'cluster10.csv', published: fig8b(9) },
  { name: 'philly n4g8', trace: 'traces_for_ElasticFlow/philly_103959.csv', cluster: 'n4g8', slot: 60, gpu: 'A100', csvTrace: 'philly_103959.csv' },
  { name: '195job', trace: 'elasticflow-traces/195job.csv', cluster: 'n16g8', slot: 240, gpu: 'A100', csvTrace: '195job.csv' },
];

/** Our policy names → the artifact's scheduler names. */
export const AUTHORS_NAME: Readonly<Record<string, string>> = {
  elasticflow: 'ef-accessctrl',
  edf: 'edf',
  gandiva: 'gandiva',
  tiresias: 'dlas-gpu',
  themis: 'themis',
};

export interface Reference {
  readonly value: number;
  readonly source: 'rerun' | 'published';
  /** Jobs that met their deadline in the authors' run (rerun only). */
  readonly accepted?: number;
}

/** Our reruns of the authors' simulator on the traces the shared data has no final value for. */
export const OUR_RERUNS = join(__dirname, 'authors-rerun.csv');

function rowsOf(path: string): Array<Record<string, string>> {
  const text = readFileSync(path, 'utf8').trim().split(/\r?\n/).filter((l) => !l.startsWith('#'));
  const head = text[0].split(',');
  return text.slice(1).map((l) => {
    const cells = l.split(',');
    return Object.fromEntries(head.map((h, i) => [h, cells[i] ?? '']));
  });
}

/**
 * The authors' value for (case, their scheduler name): a rerun of their simulator (the shared
 * `results_rerun_here.csv`, then ours in `authors-rerun.csv`), else the paper's figure.
 */
export function loadReferences(dataDir: string): (c: BenchCase, scheduler: string) => Reference | undefined {
  const rows = [...rowsOf(join(dataDir, 'results_rerun_here.csv')), ...(existsSync(OUR_RERUNS) ? rowsOf(OUR_RERUNS) : [])];
  return (c, scheduler) => {
    const row = rows.find(
      (r) => r.trace === c.csvTrace && r.cluster_spec === c.cluster && Number(r.scheduling_slot_s) === c.slot && r.scheduler === scheduler &&
        r.ddl_satis_ratio !== '',
    );
    if (row) return { value: Number(row.accepted) / (Number(row.accepted) + Number(row.declined)), source: 'rerun', accepted: Number(row.accepted) };
    const p = c.published?.[scheduler];
    return p === undefined ? undefined : { value: p, source: 'published' };
  };
}
