import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { existsSync, mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { buildApp } from './app';
import { AsyncInvocations } from './async/async-invocations';
import { Config } from './config';
import { functionNotFound, toHttp } from './errors';
import { bounded } from './lib/bounded';
import { failFastOptions, patientDuplicate, waitForRedis } from './lib/redis-health';
import { connectRedis } from './lib/redis-server';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { SecondWindow } from './metrics/second-window';
import { LocalAgent } from './providers/local/agent';
import { ImageStore } from './providers/local/image-store';
import { LocalProvider } from './providers/local/local-provider';
import { LogSink } from './providers/local/log-sink';
import { createTokendControl } from './providers/local/tokend-control';
import { tokendBinaryPath } from './providers/local/tokend-process';
import { TokendSupervisor } from './providers/local/tokend-supervisor';
import { parseInvocationPath, Invoker } from './proxy/invoker';
import { readBody } from './proxy/read-body';
import { JobStore } from './jobs/job-store';
import { TrainingService } from './jobs/training-service';
import { jobRoutes } from './routes/jobs';
import { FunctionRouter } from './proxy/router';
import { ChangeFeed } from './registry/change-feed';
import { Registry } from './registry/registry';

/** A running gateway (with its local provider, and the agent when enabled). */
export interface Gateway {
  url: string;
  port: number;
  cfg: Config;
  redis: Redis;
  provider: LocalProvider;
  agent?: LocalAgent;
  /** The supervised tokend, when this gateway runs the agent and tokend is built. */
  tokend?: TokendSupervisor;
  router: FunctionRouter;
  asyncInvocations: AsyncInvocations;
  training: TrainingService;
  close(): Promise<void>;
}

/** The platform log: stderr, as `mlfaas up` writes it. */
const platformLog = (line: string) => void process.stderr.write(`[mlfaas] ${line}\n`);

/** `redisTarget`: a `redis://` URL or a unix socket path. */
export async function startGateway(cfg: Config, redisTarget: string): Promise<Gateway> {
  // the request path fails fast (503) while Redis is away and never replays a refused write
  const redis = connectRedis(redisTarget, failFastOptions(cfg.redisTimeoutMs));
  redis.on('error', () => undefined);
  await waitForRedis(redis, 10_000).catch((e: Error) => {
    redis.disconnect();
    throw e;
  });
  // the agent's own state (replica records, lease) waits out an outage instead
  const background = patientDuplicate(redis);
  const feed = new ChangeFeed(redis);
  const registry = new Registry(redis, feed);
  const images = new ImageStore(join(cfg.dataDir, 'images'));
  const provider = new LocalProvider(redis, registry, images, cfg.version);
  const logs = new LogSink(redis);
  const metrics = new GatewayMetrics();
  let agent: LocalAgent | undefined;
  let tokend: TokendSupervisor | undefined;
  let agentRegistry: Registry | undefined;
  if (cfg.agent) {
    // the node's token daemon: replicas take CPU-device tokens per batch, quotas set here
    if (cfg.tokend && existsSync(tokendBinaryPath())) {
      const dir = join(cfg.dataDir, 'tokend');
      mkdirSync(dir, { recursive: true });
      const restarts = metrics.componentRestarts.labels({ component: 'tokend' });
      // the CPU device is all cores; a replica's quota is a fraction of one core
      tokend = await TokendSupervisor.start(
        { dir, windowMs: cfg.tokendWindowMs, cpuCapacity: cpus().length },
        { log: platformLog, restarted: () => restarts.inc(), onRestart: async () => agent?.reapplyQuotas() },
      );
    }
    const control = tokend ? createTokendControl(tokend.controlPath) : undefined;
    agentRegistry = new Registry(background, new ChangeFeed(background));
    agent = new LocalAgent(background, agentRegistry, images, logs, {
      dataDir: cfg.dataDir,
      readinessTimeoutMs: cfg.readinessTimeoutMs,
      drainMs: cfg.drainMs,
      terminationGraceMs: cfg.terminationGraceMs,
      extraEnv: tokend ? { MLFAAS_TOKEND_SOCKET: tokend.socketPath } : {},
      readSecret: (ns, name) => provider.secrets.read(ns, name),
      profileSeconds: cfg.profileSeconds > 0 ? cfg.profileSeconds : undefined,
      applyQuota: control
        ? async (pid, quota) => {
            const share = quota / cpus().length;
            await control.setQuota({ pid, device: 'cpu', request: share, limit: share });
          }
        : undefined,
    });
    await agent.start();
  }
  const router = new FunctionRouter(provider, { queueDepth: cfg.queueDepth, replicaConcurrency: cfg.replicaConcurrency });
  const window = new SecondWindow(redis, () => [...router.all()].map((s) => ({ ref: s.ref, queue: s.queued, inflight: s.inflight })));
  window.start();
  await router.start();
  metrics.attach(router);
  const invoker = new Invoker(router, provider, metrics, window, {
    maxBodyBytes: cfg.maxBodyBytes,
    upstreamTimeoutMs: cfg.upstreamTimeoutMs,
    scaleFromZeroTimeoutMs: cfg.scaleFromZeroTimeoutMs,
  });
  const asyncInvocations = new AsyncInvocations(redis, invoker, router, cfg.async);
  asyncInvocations.startWorker();
  const training = new TrainingService(redis, provider, images, new JobStore(redis), {
    policy: cfg.training.policy,
    slotSeconds: cfg.training.slotSeconds,
    slots: cfg.training.slots,
    dataDir: cfg.dataDir,
    lockMs: cfg.training.lockMs,
  });
  if (cfg.agent) await training.start();
  const app = buildApp({ cfg, provider, registry, metrics, extra: [jobRoutes(training)] });

  const asyncHandler = async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const { ref, path } = parseInvocationPath(req.url!, '/async-function/');
      const body = await readBody(req, cfg.maxBodyBytes);
      if (!(await provider.get(ref))) throw functionNotFound(ref.name, ref.namespace);
      const callId = (req.headers['x-call-id'] as string) || randomUUID();
      await asyncInvocations.enqueue(ref, req.method!, path, req.headers, body, callId);
      res.writeHead(202, { 'x-call-id': callId }).end();
    } catch (e) {
      const h = toHttp(e);
      res.writeHead(h.status, { 'content-type': 'application/json', ...h.headers }).end(JSON.stringify(h.body));
    }
  };

  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/function/')) void invoker.handle(req, res);
    else if (url.startsWith('/async-function/')) void asyncHandler(req, res);
    else app(req, res);
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const close = async (): Promise<void> => {
    // stop taking requests, let queued work finish, then tear down what it depends on; every
    // step is bounded, so a Redis or a child that died first (Ctrl-C reaches the whole process
    // group) cannot hold shutdown
    const log = platformLog;
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeIdleConnections();
    await Promise.all([
      bounded('async worker', 5000, () => asyncInvocations.close(), log),
      // running jobs checkpoint on SIGTERM (the runner SIGKILLs after 15 s)
      bounded('training service', 20_000, () => training.close(), log),
      bounded('open requests', 2000, () => closed, () => undefined),
    ]);
    server.closeAllConnections();
    router.close();
    invoker.close();
    await Promise.all([
      bounded('metrics window', 2000, () => window.close(), log),
      bounded('agent', cfg.terminationGraceMs + 3000, () => agent?.close(), log),
    ]);
    await bounded('tokend', 3000, () => tokend?.stop(), log);
    await bounded('log sink', 1000, () => logs.close(), log);
    await bounded('provider', 1000, () => provider.close(), log);
    await bounded('agent registry', 1000, () => agentRegistry?.feed.close(), log);
    background.disconnect();
    redis.disconnect();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(cfg.port, cfg.host, () => resolve());
    });
  } catch (e) {
    await close().catch(() => undefined); // a failed start (port in use) leaves nothing running
    throw e;
  }
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://${cfg.host}:${port}`,
    port,
    cfg,
    redis,
    provider,
    agent,
    tokend,
    router,
    asyncInvocations,
    training,
    close,
  };
}
