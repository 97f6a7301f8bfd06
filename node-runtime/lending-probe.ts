/**
 * Measures what <request, limit> CPU quotas do on this node: CPU-bound child processes in real
 * cgroups, their allotments applied through the platform's own enforcer (`cgroupCpuEnforcer`:
 * cpuset + cpu.shares ∝ request + CFS quota = limit), their CPU time read back from cpuacct. Used
 * by `test/integration/request-limit.timing.test.ts` and `bench/request-limit.ts`; no policy here.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Cgroups } from './cgroups';
import { cgroupCpuEnforcer } from './cpu-enforcer';

/** One probe replica: its <request, limit> and whether it is busy during the measurement. */
export interface ProbeReplica {
  name: string;
  request: number;
  limit?: number;
  busy: boolean;
}

/** What one replica got over the window. */
export interface ProbeResult {
  name: string;
  /** Cores of CPU time per second of wall time (cpuacct). */
  cores: number;
  /** Units of fixed work done per second (its throughput as a CPU-bound handler). */
  unitsPerS: number;
}

/**
 * A CPU-bound "handler": after `startMs` (time to join its cgroup) it does fixed work units for
 * `ms` and prints how many it finished. An idle replica just sleeps (it uses nothing to lend).
 */
const BUSY = `const t0=Date.now()+Number(process.argv[1]);while(Date.now()<t0);let n=0,x=0;const end=t0+Number(process.argv[2]);
while(Date.now()<end){for(let i=0;i<200000;i++)x=(x*31+i)|0;n++}console.log(JSON.stringify({n,x:x&1}))`;
const IDLE = 'setTimeout(()=>undefined,Number(process.argv[1])+Number(process.argv[2]))';

/**
 * Runs `replicas` together on `core` for `ms` and returns each one's CPU rate and throughput. Each
 * gets its own cgroup `<tag>-<name>`, removed afterwards.
 */
export async function probe(cg: Cgroups, core: number, replicas: readonly ProbeReplica[], ms: number, tag = 'probe'): Promise<ProbeResult[]> {
  const enforcer = cgroupCpuEnforcer(cg);
  const startMs = 300;
  const kids: { r: ProbeReplica; id: string; p: ChildProcess; out: Promise<string> }[] = [];
  try {
    for (const r of replicas) {
      const id = `${tag}-${r.name}-${process.pid}`;
      const procs = cg.create(id, {});
      const p = spawn(process.execPath, ['-e', r.busy ? BUSY : IDLE, String(startMs), String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
      for (const f of procs) writeFileSync(f, String(p.pid));
      await enforcer.apply({ id, pid: p.pid!, cores: [core], quota: r.request, limit: r.limit });
      const out = new Promise<string>((res) => {
        let s = '';
        p.stdout!.on('data', (d: Buffer) => (s += d.toString()));
        p.on('exit', () => res(s));
      });
      kids.push({ r, id, p, out });
    }
    // measure CPU time over the work window only (after every child joined and started)
    await new Promise((res) => setTimeout(res, startMs));
    const u0 = kids.map((k) => cg.usageUs(k.id) ?? 0);
    const t0 = process.hrtime.bigint();
    await new Promise((res) => setTimeout(res, ms - 50));
    const wallUs = Number(process.hrtime.bigint() - t0) / 1000;
    const used = kids.map((k, i) => (cg.usageUs(k.id) ?? 0) - u0[i]);
    const outs = await Promise.all(kids.map((k) => withTimeout(k.out, ms + 10_000)));
    return kids.map((k, i) => ({
      name: k.r.name,
      cores: used[i] / wallUs,
      unitsPerS: k.r.busy ? ((JSON.parse(outs[i] || '{"n":0}') as { n: number }).n * 1000) / ms : 0,
    }));
  } finally {
    for (const k of kids) k.p.kill('SIGKILL');
    for (const k of kids) await cg.remove(k.id);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | ''> {
  return Promise.race([p, new Promise<''>((res) => setTimeout(() => res(''), ms).unref())]);
}

/** The probe's scenarios: one core, two replicas at <0.3, 0.6> (lending) or <0.3, 0.3> (request = limit). */
export function scenarios(req = 0.3, lim = 0.6): { name: string; replicas: ProbeReplica[] }[] {
  return [
    { name: 'lending, B idle', replicas: [{ name: 'a', request: req, limit: lim, busy: true }, { name: 'b', request: req, limit: lim, busy: false }] },
    { name: 'request = limit, B idle', replicas: [{ name: 'a', request: req, busy: true }, { name: 'b', request: req, busy: false }] },
    { name: 'lending, both busy', replicas: [{ name: 'a', request: req, limit: lim, busy: true }, { name: 'b', request: req, limit: lim, busy: true }] },
    { name: 'request = limit, both busy', replicas: [{ name: 'a', request: req, busy: true }, { name: 'b', request: req, busy: true }] },
    { name: 'lending, requests 0.2 / 0.4, limits 0.8, both busy',
      replicas: [{ name: 'a', request: 0.2, limit: 0.8, busy: true }, { name: 'b', request: 0.4, limit: 0.8, busy: true }] },
  ];
}
