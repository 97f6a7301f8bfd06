/**
 * The pure CPU conversions (quota × cores × period, cpuset lists, v1/v2 file names) and the
 * cgroup enforcer's writes, against a fake cgroup root made of plain files.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cgroups } from '../../node-runtime/cgroups';
import { cgroupCpuEnforcer, enforcementOf, tokendCpuEnforcer } from '../../node-runtime/cpu-enforcer';
import { CFS_PERIOD_US, cfsQuotaUs, coresOfDevice, cpuFiles, cpuMaxLine, cpusetList, parseCpuList, usageUs } from '../../node-runtime/cpu-values';

describe('cpu values', () => {
  test('CFS quota is quota × cores × period, capped by limits.cpu, at least 1 ms', () => {
    expect(CFS_PERIOD_US).toBe(100_000); // the kernel's default (cpu-values.ts says why)
    expect(cfsQuotaUs(1, 1)).toBe(100_000);
    expect(cfsQuotaUs(0.25, 1)).toBe(25_000);
    expect(cfsQuotaUs(0.5, 2)).toBe(100_000);
    expect(cfsQuotaUs(1, 4)).toBe(400_000);
    expect(cfsQuotaUs(1, 2, 0.5)).toBe(50_000);
    expect(cfsQuotaUs(0.1, 2, 4)).toBe(20_000);
    expect(cfsQuotaUs(0.001, 1)).toBe(1000); // the kernel's minimum
    expect(cfsQuotaUs(0.5, 1, undefined, 50_000)).toBe(25_000);
    expect(() => cfsQuotaUs(0, 1)).toThrow(/quota/);
    expect(() => cfsQuotaUs(1.5, 1)).toThrow(/quota/);
    expect(() => cfsQuotaUs(1, 0)).toThrow(/cores/);
  });

  test('cpu.max lines', () => {
    expect(cpuMaxLine(25_000)).toBe('25000 100000');
    expect(cpuMaxLine(undefined)).toBe('max 100000');
  });

  test('cpuset lists are formatted and parsed in the kernel syntax', () => {
    expect(cpusetList([0])).toBe('0');
    expect(cpusetList([1, 0])).toBe('0-1');
    expect(cpusetList([0, 1, 2, 5, 7, 8])).toBe('0-2,5,7-8');
    expect(cpusetList([3, 3])).toBe('3');
    expect(() => cpusetList([])).toThrow();
    expect(() => cpusetList([-1])).toThrow();
    expect(parseCpuList('0-2,5,7-8\n')).toEqual([0, 1, 2, 5, 7, 8]);
    expect(parseCpuList('')).toEqual([]);
    expect(() => parseCpuList('a-b')).toThrow();
    for (const l of ['0', '0-3', '1,3,5-6']) expect(cpusetList(parseCpuList(l))).toBe(l);
  });

  test('an autoscaler device names one core; anything else is the whole node', () => {
    const node = [0, 1, 2, 3];
    expect(coresOfDevice('cpu2', node)).toEqual([2]);
    expect(coresOfDevice('cpu9', node)).toEqual(node); // not on this node
    expect(coresOfDevice(undefined, node)).toEqual(node); // not placed yet
    expect(coresOfDevice('gpu0', node)).toEqual(node);
    expect(coresOfDevice('new-1', node)).toEqual(node);
  });

  test('v1 and v2 file names and usage parsing', () => {
    expect(cpuFiles(1)).toEqual({ quota: 'cpu.cfs_quota_us', period: 'cpu.cfs_period_us', cpus: 'cpuset.cpus', mems: 'cpuset.mems', usage: 'cpuacct.usage' });
    expect(cpuFiles(2)).toEqual({ quota: 'cpu.max', cpus: 'cpuset.cpus', mems: 'cpuset.mems', usage: 'cpu.stat' });
    expect(usageUs(1, '2500000\n')).toBe(2500);
    expect(usageUs(2, 'usage_usec 1234\nuser_usec 1000\nsystem_usec 234\n')).toBe(1234);
    expect(() => usageUs(2, 'nr_periods 0\n')).toThrow();
  });
});

describe('cgroup enforcer on a fake cgroup root', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'enforce-cpu-fake-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const file = (...p: string[]) => readFileSync(join(root, ...p), 'utf8').trim();

  test('v1: cpuset group gets the parent mems and its cores; quota goes to cfs_quota_us', async () => {
    for (const h of ['cpu', 'cpuset', 'cpuacct', 'memory']) mkdirSync(join(root, h));
    writeFileSync(join(root, 'cpu', 'cpu.cfs_quota_us'), '-1');
    writeFileSync(join(root, 'cpuset', 'cpuset.cpus'), '0-3');
    writeFileSync(join(root, 'cpuset', 'cpuset.mems'), '0');
    writeFileSync(join(root, 'cpuacct', 'cpuacct.usage'), '0');
    writeFileSync(join(root, 'memory', 'memory.limit_in_bytes'), '0');
    const cg = Cgroups.detect(root)!;
    expect(cg.version).toBe(1);
    expect(cg.nodeCores).toEqual([0, 1, 2, 3]);
    expect(cg.hasCpuset).toBe(true);
    expect(cg.hasMemory).toBe(true);
    // the platform's own parent is filled from the root (an empty v1 cpuset refuses tasks)
    expect(file('cpuset', 'mlfaas', 'cpuset.cpus')).toBe('0-3');
    expect(file('cpuset', 'mlfaas', 'cpuset.mems')).toBe('0');
    const procs = cg.create('r1', { memoryBytes: 1 << 20 });
    expect(procs).toEqual(['cpu', 'cpuset', 'cpuacct', 'memory'].map((h) => join(root, h, 'mlfaas', 'r1', 'cgroup.procs')));
    expect(file('cpuset', 'mlfaas', 'r1', 'cpuset.mems')).toBe('0');
    expect(file('cpuset', 'mlfaas', 'r1', 'cpuset.cpus')).toBe('0-3'); // all cores until placed
    expect(file('cpu', 'mlfaas', 'r1', 'cpu.cfs_quota_us')).toBe('-1');
    expect(file('memory', 'mlfaas', 'r1', 'memory.limit_in_bytes')).toBe(String(1 << 20));

    const e = cgroupCpuEnforcer(cg);
    expect(e.declares).toEqual({ spatial: 'cpuset', temporal: 'cfs' });
    await e.apply({ id: 'r1', pid: 1, cores: [2], quota: 0.25 });
    expect(file('cpuset', 'mlfaas', 'r1', 'cpuset.cpus')).toBe('2');
    expect(file('cpu', 'mlfaas', 'r1', 'cpu.cfs_quota_us')).toBe(String(0.25 * CFS_PERIOD_US));
    expect(file('cpu', 'mlfaas', 'r1', 'cpu.cfs_period_us')).toBe(String(CFS_PERIOD_US));
    await e.apply({ id: 'r1', pid: 1, cores: [0, 1, 2, 3], quota: 1, limitCores: 1.5 });
    expect(file('cpuset', 'mlfaas', 'r1', 'cpuset.cpus')).toBe('0-3');
    expect(file('cpu', 'mlfaas', 'r1', 'cpu.cfs_quota_us')).toBe(String(1.5 * CFS_PERIOD_US));
    writeFileSync(join(root, 'cpuacct', 'mlfaas', 'r1', 'cpuacct.usage'), '7000000');
    expect(cg.usageUs('r1')).toBe(7000);
  });

  test('v1 without a cpuset hierarchy: CFS only, and the declaration says no spatial share', async () => {
    mkdirSync(join(root, 'cpu'));
    writeFileSync(join(root, 'cpu', 'cpu.cfs_quota_us'), '-1');
    const cg = Cgroups.detect(root)!;
    expect(cg.hasCpuset).toBe(false);
    cg.create('r2', {});
    const e = cgroupCpuEnforcer(cg);
    expect(e.declares).toEqual({ spatial: 'none', temporal: 'cfs' });
    await e.apply({ id: 'r2', pid: 1, cores: [0], quota: 0.5 });
    expect(file('cpu', 'mlfaas', 'r2', 'cpu.cfs_quota_us')).toBe(String(0.5 * CFS_PERIOD_US));
  });

  test('v2: +cpuset in subtree_control, cpuset.cpus and cpu.max in the replica group', async () => {
    writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids');
    writeFileSync(join(root, 'cpuset.cpus.effective'), '0-1');
    const cg = Cgroups.detect(root)!;
    expect(cg.version).toBe(2);
    expect(cg.nodeCores).toEqual([0, 1]);
    expect(file('cgroup.subtree_control')).toBe('+cpu +cpuset +memory +pids');
    expect(file('mlfaas', 'cgroup.subtree_control')).toBe('+cpu +cpuset +memory +pids');
    expect(cg.create('r3', { cpuCores: 0.5 })).toEqual([join(root, 'mlfaas', 'r3', 'cgroup.procs')]);
    expect(file('mlfaas', 'r3', 'cpuset.cpus')).toBe('0-1');
    expect(file('mlfaas', 'r3', 'cpu.max')).toBe(`${0.5 * CFS_PERIOD_US} ${CFS_PERIOD_US}`);
    await cgroupCpuEnforcer(cg).apply({ id: 'r3', pid: 1, cores: [1], quota: 0.25 });
    expect(file('mlfaas', 'r3', 'cpuset.cpus')).toBe('1');
    expect(file('mlfaas', 'r3', 'cpu.max')).toBe(`${0.25 * CFS_PERIOD_US} ${CFS_PERIOD_US}`);
    writeFileSync(join(root, 'mlfaas', 'r3', 'cpu.stat'), 'usage_usec 4200\nuser_usec 4000\n');
    expect(cg.usageUs('r3')).toBe(4200);
  });
});

describe('tokend fallback and the declaration', () => {
  test('tokend gets quota × cores as a share of the whole-node CPU device', async () => {
    const calls: Array<[number, number]> = [];
    const e = tokendCpuEnforcer(async (pid, share) => void calls.push([pid, share]), 4);
    await e.apply({ id: 'r', pid: 42, cores: [1], quota: 0.5 });
    await e.apply({ id: 'r', pid: 42, cores: [0, 1, 2, 3], quota: 1 });
    await e.apply({ id: 'r', pid: 42, cores: [0, 1, 2, 3], quota: 1, limitCores: 1 });
    expect(calls).toEqual([
      [42, 0.125],
      [42, 1],
      [42, 0.25],
    ]);
    expect(e.declares).toEqual({ spatial: 'none', temporal: 'tokend' });
  });

  test('the fallback says it is voluntary; nothing says nothing', () => {
    const t = enforcementOf(tokendCpuEnforcer(async () => undefined, 2), false, 'not root');
    expect(t).toEqual(expect.objectContaining({ spatial: 'none', temporal: 'tokend', memory: 'none' }));
    expect(t.summary).toMatch(/not root.*tokend.*VOLUNTARY/);
    expect(enforcementOf(undefined, false).summary).toMatch(/WARNING: nothing enforced/);
  });
});

describe('ml-inference runtime threads follow the cpuset', () => {
  const { parseConfig } = require('../../templates/ml-inference/config.js') as {
    parseConfig(env: Record<string, string>, cwd: string): { intraOpThreads: number; allowSpinning: boolean };
  };
  test('MLFAAS_CPU_CORES sets the intra-op threads; an explicit ORT_INTRA_OP_THREADS wins; neither: onnxruntime decides', () => {
    expect(parseConfig({ MLFAAS_CPU_CORES: '1' }, '/img').intraOpThreads).toBe(1);
    expect(parseConfig({ MLFAAS_CPU_CORES: '4' }, '/img').intraOpThreads).toBe(4);
    expect(parseConfig({ MLFAAS_CPU_CORES: '4', ORT_INTRA_OP_THREADS: '2' }, '/img').intraOpThreads).toBe(2);
    expect(parseConfig({}, '/img').intraOpThreads).toBe(0);
    expect(() => parseConfig({ MLFAAS_CPU_CORES: 'x' }, '/img')).toThrow(/MLFAAS_CPU_CORES/);
  });
  test("onnxruntime's threads do not spin-wait (a spinning thread burns the CFS budget) unless ORT_ALLOW_SPINNING=1", () => {
    expect(parseConfig({}, '/img').allowSpinning).toBe(false);
    expect(parseConfig({ ORT_ALLOW_SPINNING: '1' }, '/img').allowSpinning).toBe(true);
    expect(() => parseConfig({ ORT_ALLOW_SPINNING: 'yes' }, '/img')).toThrow(/ORT_ALLOW_SPINNING/);
  });
});
