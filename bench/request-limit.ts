/**
 * <request, limit> CPU quotas on this machine (issue 24, Dilu): two CPU-bound "handlers" (child
 * processes doing fixed work units) in their own cgroups on one core, their allotments applied by
 * the platform's enforcer (cpuset + cpu.shares ∝ request + CFS quota = limit). Writes
 * bench/results/request-limit.md. Needs root and cgroup v1/v2 with cpuset (this machine).
 *
 *   npx tsx bench/request-limit.ts [--seconds 3] [--repeats 3]
 *
 * Every scenario runs on the host as it is, then beside `stress-ng --cpu <cores>` (the CI's condition).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Cgroups } from '../node-runtime/cgroups';
import { probe, ProbeResult, scenarios } from '../node-runtime/lending-probe';
import { GATE_CAPACITY, GATE_SCENARIOS, gateRun, GateUse } from './request-limit-gate';

const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};

type Rows = { name: string; runs: ProbeResult[][] }[];

/** Every scenario `repeats` times, with `stress-ng --cpu <cores>` beside it or not. */
async function runSet(cg: Cgroups, core: number, seconds: number, repeats: number, stress: boolean): Promise<{ rows: Rows; load: number }> {
  const stressor: ChildProcess | undefined = stress ? spawn('stress-ng', ['--cpu', String(cpus().length), '--timeout', '600'], { stdio: 'ignore' }) : undefined;
  const load = loadavg()[0];
  const rows: Rows = [];
  try {
    for (const s of scenarios()) {
      const runs: ProbeResult[][] = [];
      for (let k = 0; k < repeats; k++) runs.push(await probe(cg, core, s.replicas, seconds * 1000, 'bench'));
      rows.push({ name: s.name, runs });
      console.log(`${stress ? '[stress] ' : ''}${s.name}`, runs.map((r) => r.map((x) => x.cores.toFixed(3)).join('/')).join('  '));
    }
  } finally {
    stressor?.kill('SIGKILL');
  }
  return { rows, load };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const cell = (xs: number[], d: number) => `${mean(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;

/** One condition's table and its summary line. */
function section(title: string, rows: Rows, load: number): { md: string[]; idle: number; both: number } {
  const table = rows.map((r) => {
    const col = (i: number, f: (p: ProbeResult) => number, d: number) => cell(r.runs.map((x) => f(x[i])), d);
    return `| ${r.name} | ${col(0, (p) => p.cores, 3)} | ${col(0, (p) => p.unitsPerS, 0)} | ${col(1, (p) => p.cores, 3)} | ${col(1, (p) => p.unitsPerS, 0)} |`;
  });
  const get = (name: string) => rows.find((r) => r.name === name)!.runs;
  const a = (name: string) => mean(get(name).map((x) => x[0].unitsPerS));
  const idle = a('lending, B idle') / a('request = limit, B idle');
  const both = a('lending, both busy') / a('request = limit, both busy');
  const leastBoth = Math.min(...get('lending, both busy').flatMap((x) => x.map((p) => p.cores)));
  return {
    idle,
    both,
    md: [
      `## ${title} (1-min load average ${load.toFixed(1)} at the start)`,
      '',
      '| scenario | A cores | A units/s | B cores | B units/s |',
      '| --- | --- | --- | --- | --- |',
      ...table,
      '',
      `Busy A's throughput with lending ÷ with request = limit: **${idle.toFixed(2)}×** when B is idle (B's idle time lent up to A's ` +
        `limit 0.6), **${both.toFixed(2)}×** when both are busy (the core's unrequested time split between them up to their limits); ` +
        `both busy with lending, the least any replica got in any run was ${leastBoth.toFixed(3)} core (request 0.3).`,
      '',
    ],
  };
}

/** The tokend gate's scenarios, `repeats` times each: a table and busy A's gain when alone. */
async function gateSection(seconds: number, repeats: number): Promise<{ md: string[]; gain: number }> {
  const rows: { name: string; runs: GateUse[][] }[] = [];
  for (const s of GATE_SCENARIOS) {
    const runs: GateUse[][] = [];
    for (let k = 0; k < repeats; k++) runs.push(await gateRun(s.n, s.request, s.limit, seconds));
    rows.push({ name: s.name, runs });
    console.log(`[gate] ${s.name}`, runs.map((r) => r.map((x) => x.used.toFixed(3)).join('/')).join('  '));
  }
  const col = (r: (typeof rows)[0], i: number, f: (u: GateUse) => number, d: number) =>
    (r.runs[0].length > i ? cell(r.runs.map((x) => f(x[i])), d) : '—');
  const a = (name: string) => mean(rows.find((r) => r.name === name)!.runs.map((x) => x[0].used));
  const gain = a('lending, alone') / a('request = limit, alone');
  return {
    gain,
    md: [
      `## tokend's CPU gate (no cgroups; 1-min load average ${loadavg()[0].toFixed(1)} at the end)`,
      '',
      'Where cgroups are not writable the agent gives tokend each replica\'s <request, limit> (`tokendCpuEnforcer`). Workers running ' +
        `2 ms batches through the ml-inference runtime's gate (\`templates/ml-inference/tokens.js\`), tokend's CPU device declared as ` +
        `${GATE_CAPACITY} CPU, its default plan (idle capacity lent up to each limit, largest deficit first). Used = batch wall time ÷ ` +
        'wall time, as a fraction of the device (what tokend bounds). A batch is 2 ms of wall time (a spin), so on this loaded host ' +
        'batches/s counts gate round trips and waits as much as work: read the used column.',
      '',
      '| scenario | A used | A batches/s | B used | B batches/s |',
      '| --- | --- | --- | --- | --- |',
      ...rows.map((r) => `| ${r.name} | ${col(r, 0, (u) => u.used, 3)} | ${col(r, 0, (u) => u.batchesPerS, 0)} | ` +
        `${col(r, 1, (u) => u.used, 3)} | ${col(r, 1, (u) => u.batchesPerS, 0)} |`),
      '',
      `Busy A's device time alone at <0.3, 0.6> ÷ at request = limit 0.3: **${gain.toFixed(2)}×**.`,
      '',
    ],
  };
}

async function main(): Promise<void> {
  const seconds = arg('seconds', 3);
  const repeats = arg('repeats', 3);
  const cg = Cgroups.detect();
  if (!cg || !cg.hasCpuset) throw new Error('needs writable cgroups with a cpuset hierarchy (root)');
  const core = cg.nodeCores[cg.nodeCores.length - 1];
  const plain = await runSet(cg, core, seconds, repeats, false);
  const stressed = await runSet(cg, core, seconds, repeats, true);
  const s1 = section('Host as it is', plain.rows, plain.load);
  const s2 = section(`Beside \`stress-ng --cpu ${cpus().length}\``, stressed.rows, stressed.load);
  const gate = await gateSection(seconds, repeats);
  const md = [
    '# <request, limit> CPU quotas: lending measured on this machine (issue 24)',
    '',
    `Command: \`npx tsx bench/request-limit.ts --seconds ${seconds} --repeats ${repeats}\` (${new Date().toISOString()}, ` +
      `${cpus().length} cores, cgroup v${cg.version}; the machine is shared, the load average says how busy it was).`,
    '',
    `Two CPU-bound handlers A and B (child processes doing fixed work units, \`node-runtime/lending-probe.ts\`), each in its own cgroup ` +
      `under \`mlfaas/\`, both on cpu${core} (cpuset), their allotments applied by the platform's enforcer (\`cgroupCpuEnforcer\`): ` +
      'cpu.shares = 1024 × request, CFS quota = limit × 100 ms; the parent `mlfaas/` weighs 1024 × the node\'s cores. "request = limit" ' +
      'is what the platform did before. Cores = CPU time of the group ÷ wall time (cpuacct); units/s = work units finished per second ' +
      `(the handler's throughput). Mean (min–max) of ${repeats} runs of ${seconds} s.`,
    '',
    ...s1.md,
    ...s2.md,
    ...gate.md,
    '## Reading',
    '',
    'The limit is a hard cap (CFS quota): A alone never gets more than 0.6 core, and with request = limit never more than 0.3 however ' +
      'idle the core. What a busy replica gets beyond that is the kernel\'s weighted fair share: between the two replicas by their ' +
      'cpu.shares (the 0.2 / 0.4 rows: 1 : 2), and between the replicas\' parent `mlfaas/` (1024 × cores) and the host\'s own ' +
      'runnable tasks (1024 each at nice 0) on that core. So each busy replica gets at least its request only while the host\'s ' +
      'runnable work on the core weighs less than the parent: on this shared machine (load averages above) it often did not, and ' +
      'a replica competing for the core then got its weight\'s share, which can be below what a replica held to its quota gets ' +
      '(presumably because CFS treats a group that was throttled, and so dequeued, like a sleeper when it returns). ' +
      'Kubernetes has the same model and puts the host\'s daemons in a ' +
      'reserved cgroup for that reason; here the host\'s processes share the root group. tokend\'s gate bounds device time per ' +
      'window instead, so its numbers hold to the quotas whatever the host\'s load (a loaded host stretches each batch instead).',
    '',
    'The live platform path (two functions\' replicas through the local provider, `setQuota(ref, id, 0.3, 0.6)`) is asserted by ' +
      '`test/integration/request-limit.timing.test.ts`, which logs the same scenarios\' numbers.',
    '',
  ].join('\n');
  writeFileSync(join(__dirname, 'results', 'request-limit.md'), md);
  console.log(`request-limit: lending_gain_idle_neighbour=${s1.idle.toFixed(2)} lending_gain_both_busy=${s1.both.toFixed(2)} ` +
    `stress: ${s2.idle.toFixed(2)} ${s2.both.toFixed(2)} tokend_gate_gain_alone=${gate.gain.toFixed(2)}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
