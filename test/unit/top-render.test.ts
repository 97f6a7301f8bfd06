import { latencyCell, render, table } from '../../cli/top-render';
import { parseInterval } from '../../cli/top';
import type { Overview } from '../../gateway/routes/overview-model';

const overview: Overview = {
  at: '2026-11-27T10:00:05.000Z',
  functions: [
    {
      name: 'digits-classify', namespace: 'openfaas-fn', kind: 'inference', image: 'digits:latest',
      replicas: { ready: 1, desired: 2, min: 0, max: 4 }, scaleToZero: true, idleToZero: 90, queueLength: 3, inflight: 1, rps: 12.5, errorsPerS: 0,
      p50Ms: 7.5, p99Ms: 62.25, sloMs: 50, sloPercentile: 99,
      replicaList: [
        { id: 'digits-classify-a1', state: 'ready', cpuQuota: 0.5, cpuLimit: 0.75, smShare: 0.25, startedAt: '2026-11-27T10:00:00.000Z' },
        { id: 'digits-classify-b2', state: 'starting', cpuQuota: 1, startedAt: '2026-11-27T10:00:01.000Z' },
      ],
    },
    {
      name: 'echo', namespace: 'staging', kind: 'classic', image: 'echo:latest', replicas: { ready: 1, desired: 1, min: 1, max: 20 },
      scaleToZero: false, queueLength: 0, inflight: 0, rps: 0, errorsPerS: 0, replicaList: [],
    },
  ],
  jobs: [{ id: 'job-1', function: 'mnist-train', state: 'running', progress: 0.425, workers: 2, deadline: '2026-11-27T11:00:00.000Z', goodput: 120 }],
};

describe('render', () => {
  it('draws functions with replicas, rates, latency vs SLO and queue, then jobs', () => {
    const s = render(overview, 200);
    const lines = s.split('\n');
    expect(lines[0]).toBe('mlfaas top  2026-11-27T10:00:05.000Z  functions 2  jobs 1');
    const fn = lines.find((l) => l.startsWith('digits-classify '))!;
    expect(fn).toMatch(/inference\s+1\/2 z90s\s+0\.\.4\s+12\.5\s+0\.0\s+7\.5\/62\.3 > 50 !\s+3\s+1$/);
    expect(lines.find((l) => l.includes('digits-classify-a1'))).toMatch(/ready\s+quota 50% limit 75% sm 25%$/);
    expect(lines.find((l) => l.includes('digits-classify-b2'))).toMatch(/starting\s+quota 100%$/);
    expect(lines.find((l) => l.startsWith('echo.staging'))).toMatch(/classic\s+1\/1\s+1\.\.20\s+0\.0\s+0\.0\s+-\/-\s+0\s+0$/);
    expect(lines.find((l) => l.startsWith('job-1'))).toMatch(/mnist-train\s+running\s+43%\s+2\s+2026-11-27T11:00:00.000Z\s+120\.0$/);
    expect(s.indexOf('FUNCTION')).toBeLessThan(s.indexOf('JOB '));
  });
  it('keeps every line within the width', () => {
    for (const w of [40, 80]) for (const l of render(overview, w).split('\n')) expect(l.length).toBeLessThanOrEqual(w);
  });
  it('says so when there is nothing', () => {
    expect(render({ at: 'now', functions: [], jobs: [] }, 80)).toContain('no functions deployed\n\nno training jobs');
  });
});

describe('latencyCell', () => {
  it('marks a p99 over the SLO and names a percentile other than 99', () => {
    expect(latencyCell({ p50Ms: 1, p99Ms: 2, sloMs: 50, sloPercentile: 99 })).toBe('1.0/2.0 <= 50');
    expect(latencyCell({ p50Ms: 1, p99Ms: 60, sloMs: 50, sloPercentile: 95 })).toBe('1.0/60.0 > 50@p95 !');
    expect(latencyCell({})).toBe('-/-');
    expect(latencyCell({ sloMs: 20, sloPercentile: 99 })).toBe('-/- slo 20'); // nothing measured: no verdict
  });
});

describe('table', () => {
  it('pads columns to the widest cell', () => {
    expect(table([['a', 'bb', 'c'], ['ccc', 'd', 'e']], 0)).toEqual(['a    bb  c', 'ccc  d   e']);
  });
});

describe('parseInterval', () => {
  it('takes Go durations and plain seconds', () => {
    expect(parseInterval(undefined)).toBe(1000);
    expect(parseInterval('500ms')).toBe(500);
    expect(parseInterval('2')).toBe(2000);
    expect(parseInterval('1m')).toBe(60_000);
  });
  it.each(['0s', '10ms', '2h', 'soon', ''])('refuses %p naming the flag', (raw) => {
    expect(() => parseInterval(raw)).toThrow(/--interval/);
  });
});
