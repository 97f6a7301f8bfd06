import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CgroupReader, replicaUsage, workingSetBytes } from '../../gateway/metrics/replica-usage';
import { GatewayMetrics } from '../../gateway/metrics/gateway-metrics';
import type { FunctionRouter } from '../../gateway/proxy/router';

/** Issue 26: per-replica CPU time and memory working set from the replica's cgroup files (laid out as the kernel does, in a temp dir). */

describe('replica usage from cgroups (issue 26)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mlfaas-cg-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const v1 = (usageUs: number | undefined): CgroupReader => ({
    version: 1,
    files: (id) => ({ quota: join(root, 'cpu', 'mlfaas', id, 'cpu.cfs_quota_us') }),
    usageUs: () => usageUs,
  });

  it('workingSetBytes is usage less inactive file cache, never below 0', () => {
    expect(workingSetBytes(1000, 'cache 700\ntotal_inactive_file 300\ninactive_file 5\n', 1)).toBe(700);
    expect(workingSetBytes(1000, 'anon 10\ninactive_file 400\n', 2)).toBe(600);
    expect(workingSetBytes(100, 'inactive_file 400\n', 2)).toBe(0);
    expect(workingSetBytes(100, '', 2)).toBe(100);
    expect(workingSetBytes(100, 'inactive_file garbage\n', 2)).toBe(100);
  });

  it('reads a v1 replica: cpuacct time in seconds, memory from <root>/memory/mlfaas/<id>', () => {
    const mem = join(root, 'memory', 'mlfaas', 'r1');
    mkdirSync(mem, { recursive: true });
    writeFileSync(join(mem, 'memory.usage_in_bytes'), '5000\n');
    writeFileSync(join(mem, 'memory.stat'), 'cache 100\ntotal_inactive_file 1000\n');
    expect(replicaUsage(v1(2_500_000), 'r1')).toEqual({ cpuSeconds: 2.5, memoryBytes: 4000 });
  });

  it('reads a v2 replica from its unified group', () => {
    const dir = join(root, 'mlfaas', 'r2');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'memory.current'), '8192');
    writeFileSync(join(dir, 'memory.stat'), 'anon 4096\ninactive_file 2048\n');
    const cg: CgroupReader = { version: 2, files: (id) => ({ quota: join(root, 'mlfaas', id, 'cpu.max') }), usageUs: () => 1_000 };
    expect(replicaUsage(cg, 'r2')).toEqual({ cpuSeconds: 0.001, memoryBytes: 6144 });
  });

  it('a replica without a group here (another node\'s) has no usage; the gauges leave it out', async () => {
    expect(replicaUsage(v1(undefined), 'elsewhere')).toBeUndefined();
    const m = new GatewayMetrics();
    const state = { label: 'a.fn', ref: { name: 'a', namespace: 'fn' }, upstreams: [], inflight: 0, desired: 1, queued: 0 };
    m.attach({ all: () => [state] } as unknown as FunctionRouter);
    const mem = join(root, 'memory', 'mlfaas', 'here');
    mkdirSync(mem, { recursive: true });
    writeFileSync(join(mem, 'memory.usage_in_bytes'), '4096');
    const cg = v1(3_000_000);
    m.attachSources({
      replicas: async () => [{ id: 'here', state: 'ready', quota: 1 }, { id: 'gone', state: 'ready', quota: 1 }],
      usage: (id) => (id === 'here' ? replicaUsage(cg, id) : replicaUsage(v1(undefined), id)),
    });
    const text = await m.registry.metrics();
    expect(text).toContain('pod_cpu_usage_seconds_total{function_name="a.fn",pod="here"} 3\n');
    expect(text).toContain('pod_memory_working_set_bytes{function_name="a.fn",pod="here"} 4096\n');
    expect(text).not.toContain('pod="gone"');
    expect(text).toMatch(/# TYPE pod_cpu_usage_seconds_total counter/);
  });
});
