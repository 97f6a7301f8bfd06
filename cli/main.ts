import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Config, loadConfig, REPO_ROOT } from '../gateway/config';
import { autoscalerPolicyName, startAutoscaler, startTrainingLoop } from '../autoscaler/live/start';
import { slotNounOf } from '../gateway/jobs/admission-answer';
import { JobStore } from '../gateway/jobs/job-store';
import { connectRedis } from '../gateway/lib/redis-server';
import { ImageStore } from '../gateway/providers/local/image-store';
import { kubeLeader, startKubernetesProvider, startKubeTraining, startNodeAgent } from '../gateway/providers/kubernetes/start';
import { LocalProvider } from '../gateway/providers/local/local-provider';
import { ChangeFeed } from '../gateway/registry/change-feed';
import { Registry } from '../gateway/registry/registry';
import { manageLoans } from '../autoscaler/training/fapes/manager';
import { startPlatformGateway } from './compose';
import { buildFunction } from './build';
import { readStack } from './stack';
import { up, waitReady } from './up';

/** One usage line (or block) per subcommand; `mlfaas CMD --help` prints its own. */
const COMMANDS: Record<string, string> = {
  up: `  mlfaas up [-f stack.yml] [--port N] [--no-build]   Redis + gateway + local provider, deploy the stack`,
  gateway: `  mlfaas gateway --redis-url URL [--port N] [--no-agent]
                                                     another gateway against a shared Redis`,
  build: `  mlfaas build [-f stack.yml] [--filter NAME]        shrinkwrap functions into the local image store`,
  autoscaler: `  mlfaas autoscaler --redis-url URL                  the inference autoscaler alone (mlfaas up embeds it)`,
  'node-agent': `  mlfaas node-agent                                  on a Kubernetes node (a DaemonSet): quotas into pod cgroups,
                                                     capacity and usage on /metrics (NODE_NAME, MLFAAS_KUBE_*)`,
  sim: `  mlfaas sim inference --trace FILE --policy NAME [--slo-ms N] ...
                                                     replay an inference trace in the simulator
  mlfaas sim training --trace FILE --cluster nXgY --slot S --gpu A100|T4 --policy NAME
                                                     replay a training trace in the simulator`,
  jobs: `  mlfaas jobs list | watch ID | submit --function F --length N [--deadline S]
        [-g URL] [--username U --password P]         training jobs; watch draws a progress bar (SSE);
                                                     mlfaas jobs --help: gateway and credentials`,
  top: `  mlfaas top [-g URL] [--once] [--interval 1s]       live table of functions, replicas, quotas, rps, p99 and jobs`,
  help: `  mlfaas help | --help | -h | CMD --help             this help, or one command's`,
};

const USAGE = `mlfaas — serverless ML functions with the OpenFaaS API

Usage:
${Object.values(COMMANDS).join('\n')}

Configuration comes from MLFAAS_* environment variables (see README); flags override them.`;

const usageOf = (cmd: string) => `Usage:\n${COMMANDS[cmd]}\n\nConfiguration comes from MLFAAS_* environment variables (see README); flags override them.`;

const log = (l: string) => process.stderr.write(`[mlfaas] ${l}\n`);

function config(values: Record<string, unknown>): Config {
  const over: Partial<Config> = {};
  if (values.port !== undefined) over.port = Number(values.port);
  if (values['redis-url'] !== undefined) over.redisUrl = String(values['redis-url']);
  if (values['no-agent']) over.agent = false;
  return loadConfig(process.env, over);
}

/** Exit status of a forced exit (a second signal): 128 + the signal's number, as shells report it. */
const FORCED_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;
/** A graceful stop that takes longer than this exits anyway (every step is bounded well below). */
const STOP_DEADLINE_MS = 45_000;
/** `npm start` forwards the terminal's SIGINT that already reached us: a repeat this soon is the same Ctrl-C. */
const SAME_SIGNAL_MS = 500;

function onSignals(stop: () => Promise<void>): void {
  let firstAt = 0;
  const handler = (sig: keyof typeof FORCED_EXIT) => {
    if (firstAt) {
      if (Date.now() - firstAt < SAME_SIGNAL_MS) return;
      log(`${sig} again: exiting now without waiting for the stop to finish`);
      process.exit(FORCED_EXIT[sig]);
    }
    firstAt = Date.now();
    log(`${sig}: stopping replicas, gateway and redis (Ctrl-C again to force)`);
    setTimeout(() => {
      log(`stop did not finish in ${STOP_DEADLINE_MS} ms; exiting`);
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    stop().then(
      () => {
        log(`stopped in ${Date.now() - firstAt} ms`);
        process.exit(0);
      },
      (e) => {
        log(`stop failed: ${(e as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === 'help' || cmd === '--help' || cmd === '-h') {
    const topic = cmd === 'help' && rest[0] && COMMANDS[rest[0]] ? rest[0] : undefined;
    console.log(topic ? usageOf(topic) : USAGE);
    return cmd === undefined ? 2 : 0;
  }
  if (cmd === 'jobs') return (require('./jobs') as typeof import('./jobs')).jobsCommand(rest);
  if (cmd === 'top') return (require('./top') as typeof import('./top')).topCommand(rest);
  if (cmd === 'sim') return (require('../autoscaler/sim/cli') as typeof import('../autoscaler/sim/cli')).main(rest);
  if (!(cmd in COMMANDS)) {
    log(`unknown command "${cmd}"`);
    console.log(USAGE);
    return 2;
  }
  const { values } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      file: { type: 'string', short: 'f' },
      port: { type: 'string' },
      'redis-url': { type: 'string' },
      'no-agent': { type: 'boolean' },
      'no-build': { type: 'boolean' },
      filter: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(cmd in COMMANDS ? usageOf(cmd) : USAGE);
    return 0;
  }
  switch (cmd) {
    case 'up': {
      const cfg = config(values);
      const stackFile = values.file ?? (existsSync('stack.yml') ? 'stack.yml' : join(REPO_ROOT, 'stack.yml'));
      const p = await up(cfg, { stackFile, build: !values['no-build'], log });
      onSignals(() => p.stop());
      const ready = await waitReady(p.gateway, cfg.readinessTimeoutMs);
      log(ready ? `ready: ${p.gateway.url} (Ctrl-C stops everything)` : 'some replicas are not ready yet; see /system/logs');
      return -1; // keep running
    }
    case 'gateway': {
      const cfg = config(values);
      if (!cfg.redisUrl) {
        log('mlfaas gateway needs a shared Redis: --redis-url redis://127.0.0.1:6379 (or use `mlfaas up`)');
        return 2;
      }
      const gw = await startPlatformGateway(cfg, cfg.redisUrl);
      onSignals(() => gw.close());
      log(`gateway on ${gw.url} (agent: ${gw.agent ? 'yes' : 'no'})`);
      gw.notices.forEach(log);
      return -1;
    }
    case 'build': {
      const cfg = config(values);
      const stack = readStack(values.file ?? 'stack.yml');
      const store = new ImageStore(join(cfg.dataDir, 'images'));
      const fns = stack.functions.filter((f) => !values.filter || f.name === values.filter);
      if (fns.length === 0) {
        log(`no function matches --filter ${values.filter}`);
        return 1;
      }
      for (const f of fns) {
        const m = buildFunction(f, stack.file, cfg.templatesDir, store);
        console.log(`${f.name}: ${m.image} → ${m.dir}`);
      }
      return 0;
    }
    case 'autoscaler': {
      const cfg = config(values);
      if (!cfg.redisUrl) {
        log('mlfaas autoscaler needs the shared Redis: --redis-url redis://127.0.0.1:6379 (mlfaas up runs one itself)');
        return 2;
      }
      const redis = connectRedis(cfg.redisUrl);
      const provider =
        cfg.provider === 'kubernetes'
          ? await startKubernetesProvider(cfg, redis)
          : new LocalProvider(redis, new Registry(redis, new ChangeFeed(redis)), new ImageStore(join(cfg.dataDir, 'images')), cfg.version);
      const kube = cfg.provider === 'kubernetes';
      const a = await startAutoscaler(cfg, redis, provider, kube ? await kubeLeader(cfg) : undefined);
      // on Kubernetes the training round loop runs here too: its jobs are pods, not children of an agent
      const training = kube ? await startKubeTraining(cfg, redis, provider) : undefined;
      const loop = training &&
        (await startTrainingLoop(cfg, redis, new JobStore(redis), training.source, slotNounOf(provider.info()), training.capacity, () =>
          training.manageNodes(manageLoans)));
      onSignals(async () => {
        await loop?.close();
        await a.close();
        redis.disconnect();
      });
      log(`inference autoscaler: ${autoscalerPolicyName(cfg)} (waits for ` +
        `the ${kube ? 'Kubernetes Lease mlfaas-autoscaler' : 'Redis lease'} if another runs)`);
      if (loop)
        log(`training round loop: policy ${cfg.training.policy}, jobs as pods on the nodes labelled mlfaas.io/vc=training (waits for the ` +
          `Redis training lease if another runs)`);
      return -1;
    }
    case 'node-agent': {
      const cfg = config(values);
      const node = process.env.NODE_NAME;
      if (!node) {
        log('mlfaas node-agent needs NODE_NAME (the downward API: spec.nodeName)');
        return 2;
      }
      const { agent, stop } = await startNodeAgent(cfg, node, Number(values.port ?? 9100), log);
      onSignals(stop);
      log(`node agent on ${node}: ${JSON.stringify(agent.capacity())}, metrics on ${agent.url}/metrics`);
      return -1;
    }
    default:
      log(`unknown command "${cmd}"`);
      console.log(USAGE);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e) => {
    log((e as Error).message);
    process.exit(1);
  },
);
