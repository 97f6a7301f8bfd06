import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { buildApp } from './app';
import { ownOrigins } from './auth';
import { resolveCredentials } from './auth-credentials';
import { AsyncInvocations } from './async/async-invocations';
import { Config } from './config';
import { functionNotFound, toHttp } from './errors';
import { answerAndClose, onClientError, onConnect, onUnmetExpectation, refuseEarly } from './http-edge';
import { bounded } from './lib/bounded';
import { failFastOptions, patientDuplicate, waitForRedis } from './lib/redis-health';
import { connectRedis } from './lib/redis-server';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { replicaUsage } from './metrics/replica-usage';
import { SecondWindow } from './metrics/second-window';
import { LocalAgent } from './providers/local/agent';
import { cgroupCpuEnforcer, enforcementOf, tokendCpuEnforcer, withGpu } from '../node-runtime/cpu-enforcer';
import { gpuQuotaPusher, GpuNodeRuntime, startGpuNode } from '../node-runtime/gpu-node';
import { discoverGpus } from '../node-runtime/gpus';
import { Isolation } from './providers/local/replica';
import { isolationFor } from './providers/local/isolation';
import { ImageStore } from './providers/local/image-store';
import type { FunctionProvider } from './providers/function-provider';
import { kubeNodeFacts, startKubernetesProvider, startKubeTraining } from './providers/kubernetes/start';
import { LocalProvider } from './providers/local/local-provider';
import { LogSink } from './providers/local/log-sink';
import { createTokendControl } from '../node-runtime/tokend-control';
import { tokendBinaryPath } from '../node-runtime/tokend-process';
import { TokendSupervisor } from '../node-runtime/tokend-supervisor';
import { parseInvocationPath, Invoker, trainingNotInvocable } from './proxy/invoker';
import { Admission } from './proxy/admission';
import { V2Handler } from './proxy/v2-handler';
import { v2Error } from './proxy/v2-paths';
import { readBody } from './proxy/read-body';
import { slotNounOf } from './jobs/admission-answer';
import { JobService } from './jobs/job-service';
import { JobStore } from './jobs/job-store';
import { TrainingFunctions } from './jobs/training-functions';
import { jobRoutes } from './routes/jobs';
import { overviewRoutes, readOverview } from './routes/overview';
import { gatewayNodeSources, nodesRoutes } from './routes/nodes';
import type { NodeDevices } from './routes/nodes-model';
import type { UiStreamHub } from './routes/ui-stream';
import { FunctionRouter } from './proxy/router';
import { ChangeFeed } from './registry/change-feed';
import { Registry } from './registry/registry';
import type { Gateway, GatewayOptions } from './gateway-types';

export type { Gateway, GatewayOptions } from './gateway-types';

/** The platform log: stderr, as `mlfaas up` writes it. */
const platformLog = (line: string) => void process.stderr.write(`[mlfaas] ${line}\n`);

/** `redisTarget`: a `redis://` URL or a unix socket path. */
export async function startGateway(cfg: Config, redisTarget: string, opts: GatewayOptions): Promise<Gateway> {
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
  const local = cfg.provider === 'local' ? new LocalProvider(redis, registry, images, cfg.version) : undefined;
  const provider: FunctionProvider = local ?? (await startKubernetesProvider(cfg, redis));
  const logs = new LogSink(redis);
  const metrics = new GatewayMetrics();
  // mlfaas_component_restarts_total{component="redis"}, restarts before this gateway included
  let unwatchRedis: (() => void) | undefined;
  if (opts.embeddedRedis) {
    const restarts = metrics.componentRestarts.labels({ component: 'redis' });
    restarts.inc(opts.embeddedRedis.restarts);
    unwatchRedis = opts.embeddedRedis.onRestart(() => restarts.inc());
  }
  let agent: LocalAgent | undefined;
  let tokend: TokendSupervisor | undefined;
  let agentRegistry: Registry | undefined;
  let isolation: { isolation?: Isolation; describe: string } | undefined;
  let gpu: GpuNodeRuntime | undefined;
  let devices: NodeDevices | undefined; // this node's, for GET /system/nodes
  mkdirSync(cfg.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(cfg.dataDir, 0o700); // secrets, Redis, images: the platform's alone
  if (cfg.agent && !local)
    platformLog('MLFAAS_PROVIDER=kubernetes: no agent in the gateway (replicas run as pods; the node agent enforces quotas on the nodes)');
  if (cfg.agent && local) {
    const gpuNode = discoverGpus(cfg.gpus);
    // the node's token daemon: replicas take CPU-device tokens per batch, quotas set here
    if (cfg.tokend && existsSync(tokendBinaryPath())) {
      const dir = join(cfg.dataDir, 'tokend');
      mkdirSync(dir, { recursive: true });
      const restarts = metrics.componentRestarts.labels({ component: 'tokend' });
      // the CPU device is all cores; a replica's quota is a fraction of one core
      tokend = await TokendSupervisor.start(
        { dir, windowMs: cfg.tokendWindowMs, cpuCapacity: cpus().length, gpus: gpuNode.gpus.length || undefined },
        { log: platformLog, restarted: () => restarts.inc(), onRestart: async () => agent?.reapplyQuotas() },
      );
    }
    const control = tokend ? createTokendControl(tokend.controlPath) : undefined;
    isolation = isolationFor(cfg, background);
    const cgroups = isolation.isolation?.cgroups;
    const nodeCores = cgroups?.nodeCores ?? cpus().map((_, i) => i);
    // the kernel where cgroups are writable; else tokend's CPU device (all cores), voluntary
    const cpu = cgroups
      ? cgroupCpuEnforcer(cgroups)
      : control
        ? tokendCpuEnforcer(async (pid, share, limit) => void (await control.setQuota({ pid, device: 'cpu', request: share, limit })), nodeCores.length)
        : undefined;
    const enforcement = enforcementOf(cpu, !!cgroups?.hasMemory,
      cgroups ? undefined : isolation.isolation ? 'no writable cgroup hierarchy' : `isolation ${isolation.describe}`);
    if (enforcement.temporal !== 'cfs') platformLog(`enforcement: ${enforcement.summary}`);
    // GPU replicas: the limiter preloaded against tokend's gpuN window, MPS where it can run
    gpu = startGpuNode(gpuNode, { dataDir: cfg.dataDir, tokendSocket: tokend?.socketPath, sandboxed: !!isolation.isolation, log: platformLog });
    await local.declareEnforcement(withGpu(enforcement, gpu.enforcement));
    devices = { cpuCores: nodeCores.length, gpus: gpuNode.gpus.map(({ index, name, memoryMiB }) => ({ index, name, memoryMiB })), gpuSetup: gpu.describe };
    agentRegistry = new Registry(background, new ChangeFeed(background));
    agent = new LocalAgent(background, agentRegistry, images, logs, {
      isolation: isolation.isolation,
      dataDir: cfg.dataDir,
      readinessTimeoutMs: cfg.readinessTimeoutMs,
      drainMs: cfg.drainMs,
      terminationGraceMs: cfg.terminationGraceMs,
      extraEnv: tokend ? { MLFAAS_TOKEND_SOCKET: tokend.socketPath } : {},
      readSecret: (ns, name) => local.secrets.read(ns, name),
      profileSeconds: cfg.profileSeconds > 0 ? cfg.profileSeconds : undefined,
      profileMode: cfg.profileMode,
      profiler: opts.profiler,
      cpu,
      nodeCores,
      gpus: gpu.replicas,
      gpuQuota: control && gpu.replicas ? gpuQuotaPusher(control) : undefined,
      coldStart: (ref, cause) => metrics.coldStarts.inc({ function_name: `${ref.name}.${ref.namespace}`, cause }),
      models: { storeDir: cfg.modelStore, cacheBytes: cfg.modelCacheBytes },
    });
    await agent.start();
  }
  const router = new FunctionRouter(provider, { queueDepth: cfg.queueDepth, replicaConcurrency: cfg.replicaConcurrency });
  const window = new SecondWindow(redis, () => [...router.all()].map((s) => ({ ref: s.ref, queue: s.queued, inflight: s.inflight })));
  window.start();
  await router.start();
  metrics.attach(router);
  const admission = new Admission(redis); // the fixed-cluster mode's accept rates (closed with the invoker)
  admission.start();
  const invoker = new Invoker(router, provider, metrics, window, {
    admission,
    maxBodyBytes: cfg.maxBodyBytes,
    upstreamTimeoutMs: cfg.upstreamTimeoutMs,
    scaleFromZeroTimeoutMs: cfg.scaleFromZeroTimeoutMs,
  });
  const v2 = new V2Handler(invoker, router, redis, { version: cfg.version.release }); // the Open Inference Protocol (issue 25)
  const asyncInvocations = new AsyncInvocations(redis, invoker, router, { ...cfg.async, metrics });
  asyncInvocations.startWorker();
  const jobStore = new JobStore(redis);
  const kubeTraining = local ? undefined : await startKubeTraining(cfg, redis, provider);
  const trainingFunctions = kubeTraining?.source ?? new TrainingFunctions(redis, provider, images, cfg.dataDir, isolation?.isolation);
  const noun = slotNounOf(provider.info());
  const trainingLoop = cfg.agent && local && opts.trainingLoop
    ? await opts.trainingLoop({ redis, book: jobStore, launcher: trainingFunctions, noun }) : undefined;
  const training = new JobService(redis, trainingFunctions, jobStore, {
    policy: cfg.training.policy,
    slotSeconds: cfg.training.slotSeconds,
    slots: cfg.training.slots,
    dataDir: cfg.dataDir,
    noun,
    capacity: kubeTraining?.capacity,
    scheduler: opts.scheduler,
    onAdmission: (fn, admitted) => metrics.admissions.inc({ function_name: fn, result: admitted ? 'admitted' : 'refused' }),
  }, trainingLoop, opts.clock);
  const replicaCgroups = isolation?.isolation?.cgroups; // this node's replicas' own groups: pod_cpu_usage_seconds_total, pod_memory_working_set_bytes
  metrics.attachSources({ replicas: (ref) => provider.endpoints(ref), jobs: () => jobStore.list(), acceptRate: (fn) => admission.rateOf(fn),
    usage: replicaCgroups ? (id) => replicaUsage(replicaCgroups, id) : undefined });
  let port = cfg.port;
  const url = () => `http://${cfg.host}:${port}`;
  const creds = await resolveCredentials(cfg.auth, redis, cfg.dataDir, url);
  const effective: Config = { ...cfg, auth: creds.auth };
  const isolationLine = isolation?.describe ?? 'no agent in this process';
  let hub: UiStreamHub | undefined;
  const nodes = gatewayNodeSources({ provider, devices, controlPath: () => tokend?.controlPath ?? join(cfg.dataDir, 'tokend', 'tokend-control.sock'),
    clusterNodes: local ? undefined : kubeNodeFacts(cfg) });
  const app = buildApp({
    cfg: effective,
    provider,
    registry,
    metrics,
    extra: [jobRoutes(training), overviewRoutes({ provider, redis, routed: () => router.all(), jobs: jobStore }), nodesRoutes(nodes)],
    overview: () => readOverview({ provider, redis, routed: () => router.all(), jobs: jobStore }), // the dashboard's SSE snapshots
    origins: () => ownOrigins(cfg.host, port, cfg.allowedOrigins),
    onHub: (h) => (hub = h),
    info: { mlfaas: { isolation: isolationLine, enforcement: provider.enforcement(), auth: creds.auth.enabled ? 'basic' : 'off',
      ...(gpu ? { gpus: gpu.describe } : {}) } },
  });

  const asyncHandler = async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const { ref, path } = parseInvocationPath(req.url!, '/async-function/');
      asyncInvocations.callbackUrlOf(req.headers); // a refused X-Callback-Url is a 400 before anything is read or queued
      const body = await readBody(req, cfg.maxBodyBytes);
      const fn = await provider.get(ref);
      if (!fn) throw functionNotFound(ref.name, ref.namespace);
      if (fn.kind === 'training') throw trainingNotInvocable(`${ref.name}.${ref.namespace}`);
      const callId = (req.headers['x-call-id'] as string) || randomUUID();
      await asyncInvocations.enqueue(ref, req.method!, path, req.headers, body, callId, fn.annotations);
      res.writeHead(202, { 'x-call-id': callId }).end();
    } catch (e) {
      const h = toHttp(e);
      res.writeHead(h.status, { 'content-type': 'application/json', ...h.headers }).end(JSON.stringify(h.body));
    }
  };

  // Node's own Host check answers an empty 400; refuseEarly answers it in JSON instead
  const server: Server = createServer({ requireHostHeader: false }, (req, res) => {
    const url = req.url ?? '/';
    const v2Path = url === '/v2' || url.startsWith('/v2/') || url.startsWith('/v2?');
    const early = refuseEarly(req, cfg.maxBodyBytes);
    if (early) return answerAndClose(res, early, v2Path ? v2Error : undefined);
    if (url.startsWith('/function/')) void invoker.handle(req, res);
    else if (url.startsWith('/async-function/')) void asyncHandler(req, res);
    else if (v2Path) void v2.handle(req, res);
    else app(req, res);
  });
  server.on('clientError', onClientError);
  server.on('checkExpectation', onUnmetExpectation);
  server.on('connect', onConnect);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const close = async (): Promise<void> => {
    // stop taking requests, let queued work finish, then tear down what it depends on; every
    // step is bounded, so a Redis or a child that died first (Ctrl-C reaches the whole process
    // group) cannot hold shutdown
    const log = platformLog;
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeIdleConnections();
    hub?.close(); // the dashboards' and the jobs' event streams end, so `closed` does not wait for their browsers
    training.endStreams();
    const idle = setInterval(() => server.closeIdleConnections(), 50); // a keep-alive connection whose last answer just ended
    await Promise.all([
      bounded('async worker', 5000, () => asyncInvocations.close(), log),
      // running jobs checkpoint on SIGTERM (the runner SIGKILLs after 15 s)
      bounded('training service', 20_000, async () => {
        await trainingLoop?.close();
        await training.close();
      }, log),
      bounded('open requests', 2000, () => closed, () => undefined),
    ]);
    clearInterval(idle);
    server.closeAllConnections();
    router.close();
    invoker.close();
    await Promise.all([
      bounded('metrics window', 2000, () => window.close(), log),
      bounded('agent', cfg.terminationGraceMs + 3000, () => agent?.close(), log),
    ]);
    await bounded('tokend', 3000, () => tokend?.stop(), log);
    gpu?.stop();
    await bounded('log sink', 1000, () => logs.close(), log);
    await bounded('provider', 1000, () => provider.close(), log);
    await bounded('agent registry', 1000, () => agentRegistry?.feed.close(), log);
    unwatchRedis?.();
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
  port = (server.address() as AddressInfo).port;

  return {
    url: url(),
    port,
    cfg: effective,
    notices: [...creds.notices, `function isolation: ${isolationLine}`, `resource enforcement: ${provider.enforcement().summary}`],
    redis,
    provider,
    agent,
    tokend,
    router,
    asyncInvocations,
    training,
    trainingLoop,
    close,
  };
}
