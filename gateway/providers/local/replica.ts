import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { cpus } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { DefaultLimits, REPO_ROOT } from '../../config';
import { functionBaseEnv, tiedToParent } from '../../lib/process';
import { FunctionRef } from '../../lib/names';
import { FunctionSpec } from '../../registry/function-spec';
import { ModelSource, modelVersionOf } from '../../registry/model-uri-spec';
import { ReplicaInfo, ReplicaState } from '../../registry/registry';
import { KEPT_LINES, summarizeExit } from './exit-summary';
import { freePort } from './free-port';
import { Cgroups, cpuCores, memoryBytes } from '../../../node-runtime/cgroups';
import { Egress } from '../../../node-runtime/egress';
import { GpuReplicas } from '../../../node-runtime/gpu-replica';
import { IMAGE_DIR_ENV, ImageManifest } from './image-store';
import { gpuDevices, imageBinds, platformPath, privateTmpfs, SANDBOX_PATH_ENV, SANDBOX_PATHS, SANDBOX_PORT, SandboxPlan, sandboxArgv,
  sandboxedFunctionPid } from '../../../node-runtime/sandbox';

/** What a replica needs to know about its function, fixed for its lifetime. */
export interface ReplicaPlan {
  ref: FunctionRef;
  spec: FunctionSpec;
  manifest: ImageManifest;
  /** Identifies the spec version; replicas of an older version are replaced on update. */
  specHash: string;
  /** A GPU replica's SM share (a replacement at a new share); absent: the function's own. */
  smShare?: number;
}

/** Side effects a replica needs, injected by the agent. */
export interface ReplicaHost {
  agentId: string;
  dataDir: string;
  readinessTimeoutMs: number;
  drainMs: number;
  terminationGraceMs: number;
  /** Extra environment for every replica (e.g. the tokend socket). */
  extraEnv: Record<string, string>;
  publish(info: ReplicaInfo): Promise<void>;
  unpublish(id: string): Promise<void>;
  log(instance: string, text: string): void;
  /**
   * Writes the function's secret files, owned by `uid` when given (the uid its replicas run as);
   * returns their directory (undefined: none named).
   */
  writeSecrets(ref: FunctionRef, names: string[], instance: string, uid?: number): Promise<string | undefined>;
  /** Present when function processes are confined (root on Linux); absent = plain children. */
  isolation?: Isolation;
  /**
   * Cores in the replica's cpuset when it starts (`MLFAAS_CPU_CORES`: the runtime sizes its
   * thread pool to it); absent = every core the OS reports.
   */
  cpuCores?(id: string): Promise<number>;
  /** Present on a GPU node: hands GPUs (with the limiter and MPS env) to replicas that ask. */
  gpus?: GpuReplicas;
  /** The node's model cache (`node-runtime/model-cache.ts`): a function with `mlfaas.model.uri` gets its verified file from it. */
  models?: ModelFiles;
}

/** What a replica needs of the node's model cache. */
export interface ModelFiles {
  /** The verified model file's absolute path (fetched first if the node lacks it), held by `holder` until `release`. */
  acquire(source: ModelSource, holder: string): Promise<string>;
  release(holder: string): void;
}

/** Where a sandboxed replica sees its model file fetched by URI (read-only; only its own). */
export const MODEL_MOUNT = '/var/openfaas/model';

/** How this host confines function processes. */
export interface Isolation {
  uidFor(ref: FunctionRef): Promise<number>;
  /** Absent when no cgroup hierarchy is writable. */
  cgroups?: Cgroups;
  /** What a function that sets no limit of its own gets (`MLFAAS_DEFAULT_LIMITS`). */
  limits: DefaultLimits;
  /** `MLFAAS_FUNCTION_EGRESS=internet`: a veth per replica; absent: loopback only. */
  egress?: Egress;
}

const WATCHDOG = join(__dirname, 'classic-watchdog.ts');
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 16000, 30000];

function probe(url: string, timeoutMs: number, socketPath?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get(url, { timeout: timeoutMs, ...(socketPath ? { socketPath } : {}) }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/**
 * One replica: a child process with a port, a readiness probe, crash restarts with exponential
 * backoff, and a graceful drain on stop. Every state change is published to the registry.
 */
export class Replica {
  state: ReplicaState = 'starting';
  quota = 1;
  weight = 1;
  /** tokend device (`gpuN`) of the GPU this replica was given; undefined: none (CPU quota). */
  gpu?: number;
  /** Of the version that served before an update the agent restarted in (see `recoverServed`). */
  recovering = false;
  /** The SM share its GPU process was started at, where MPS enforces it; undefined: none enforced. */
  smShare?: number;
  /** The cores its CPU quota is a fraction of (its cpuset's; the agent updates it when placed): `ReplicaInfo.cores`. */
  cores?: number;
  /** The uid its function process runs as (sandboxed); undefined: the platform's. */
  runUid?: number;
  /** Its model file on the host when fetched by URI (the node's cache); undefined: the model is in its image. */
  modelPath?: string;
  private child?: ChildProcess;
  private port = 0;
  private restarts = 0;
  private stopping = false;
  private startedAt = new Date().toISOString();
  private restartTimer?: NodeJS.Timeout;
  private socket?: string;
  private plannedSocket?: string;
  private lastError?: string;
  private functionPid?: number;

  constructor(
    readonly id: string,
    readonly plan: ReplicaPlan,
    private readonly host: ReplicaHost,
  ) {}

  get isStopping(): boolean {
    return this.stopping;
  }

  /**
   * The function's process on the host (tokend's quotas and the profiler address it). Sandboxed,
   * the process the agent spawned is the sandbox's outer process; the function is its grandchild.
   */
  get pid(): number | undefined {
    return this.functionPid ?? this.child?.pid;
  }

  info(): ReplicaInfo {
    return {
      id: this.id,
      url: `http://127.0.0.1:${this.port}`,
      ...(this.socket ? { socket: this.socket } : {}),
      state: this.state,
      agent: this.host.agentId,
      pid: this.pid,
      startedAt: this.startedAt,
      restarts: this.restarts,
      weight: this.weight,
      quota: this.quota,
      ...(this.cores !== undefined && this.gpu === undefined ? { cores: this.cores } : {}),
      ...(this.smShare !== undefined ? { smShare: this.smShare } : {}),
      ...(this.gpu !== undefined ? { gpu: `gpu${this.gpu}` } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  async start(): Promise<void> {
    if (this.stopping) return;
    this.state = 'starting';
    this.startedAt = new Date().toISOString();
    try {
      const { env, sandbox } = await this.environment();
      this.port = sandbox ? SANDBOX_PORT : await freePort();
      env.PORT = String(this.port);
      this.socket = undefined;
      this.functionPid = undefined;
      if (this.stopping) {
        this.host.models?.release(this.id); // stop() ran while the model was fetched
        return; // stopped while we awaited: never spawn an orphan
      }
      this.spawn(env, sandbox);
    } catch (e) {
      this.host.log(this.id, `failed to start: ${(e as Error).message}`);
      this.lastError = `failed to start: ${(e as Error).message}`;
      await this.crashed();
      return;
    }
    await this.host.publish(this.info());
    await this.waitReady();
  }

  /**
   * This replica's directory on the host, root's only: its socket (sandboxed: the gateway's way
   * into the replica's network namespace; else the runtime's own socket).
   */
  private get runDir(): string {
    return join(this.host.dataDir, 'run', this.id);
  }

  /**
   * The process environment, and the sandbox it runs in (when the host can confine it). It is
   * built from an allow-list (`functionBaseEnv`), then the function's env, then the platform's
   * variables, which a function's env never overrides.
   */
  private async environment(): Promise<{ env: Record<string, string>; sandbox?: SandboxPlan }> {
    const { spec, manifest, ref } = this.plan;
    const iso = this.host.isolation;
    const platform: Record<string, string> = {
      HOST: '127.0.0.1',
      MLFAAS_FUNCTION_NAME: ref.name,
      MLFAAS_NAMESPACE: ref.namespace,
      MLFAAS_REPLICA_ID: this.id,
      MLFAAS_CPU_CORES: String((this.cores = (await this.host.cpuCores?.(this.id)) ?? cpus().length)),
    };
    const nodePath = (iso ? platformPath : (p: string) => p)(join(REPO_ROOT, 'node_modules'));
    const env: Record<string, string> = { ...functionBaseEnv(!!iso, SANDBOX_PATH_ENV), NODE_PATH: nodePath, ...spec.envVars };
    if (spec.ml.maxBatchSize) platform.MAX_BATCH_SIZE = String(spec.ml.maxBatchSize);
    if (spec.ml.model && !env.MODEL_PATH && !spec.ml.modelSource) env.MODEL = spec.ml.model;
    const model = await this.modelFile(spec.ml.modelSource);
    if (model) platform.MLFAAS_MODEL_VERSION = model.version;
    const fprocess = spec.envProcess || manifest.fprocess;
    if (manifest.mode === 'classic') {
      if (!fprocess) throw new Error('a classic-watchdog image needs fprocess (envProcess)');
      platform.fprocess = fprocess;
    }
    const run = this.runDir;
    rmSync(run, { recursive: true, force: true });
    mkdirSync(run, { recursive: true, mode: 0o700 });
    const gpu = this.host.gpus?.attach(this.id, spec, !!iso, env.LD_LIBRARY_PATH, this.plan.smShare);
    this.gpu = gpu?.device;
    this.smShare = gpu?.smShare;
    if (gpu)
      this.host.log(this.id,
        `gpu${gpu.device}: temporal quota ${gpu.enforced.temporal ? 'enforced' : 'NOT enforced'}, SM ` +
        `share ${gpu.smShare !== undefined ? `${gpu.smShare} enforced (MPS)` : 'not enforced'}`);
    else if (spec.ml.gpus) this.host.log(this.id, 'warning: the function asks for a GPU (mlfaas.gpu) but this node has none: started without one');
    // every GPU replica under the node's MPS daemon runs as its uid (one MPS server per uid); else the function's own
    const gpuUid = gpu?.smShare !== undefined ? this.host.gpus?.setup.gpuUid : undefined;
    const uid = iso ? (gpuUid ?? (await iso.uidFor(ref))) : undefined;
    this.runUid = uid;
    const secretsDir = await this.host.writeSecrets(ref, spec.secrets ?? [], this.id, uid);
    if (!iso) {
      this.plannedSocket = join(run, 'replica.sock');
      if (model) platform.MODEL_PATH = model.file;
      Object.assign(env, this.host.extraEnv, gpu?.env, platform, { MLFAAS_SOCKET: this.plannedSocket });
      if (secretsDir) env.MLFAAS_SECRETS_DIR = secretsDir;
      return { env };
    }
    this.plannedSocket = join(run, 'gateway.sock');
    const inside = join(SANDBOX_PATHS.run, 'replica.sock');
    const binds = [...imageBinds(manifest.dir)];
    if (secretsDir) binds.push({ src: secretsDir, dst: SANDBOX_PATHS.secrets, readOnly: true });
    if (model) {
      // the one cached file, read-only: the cache (other versions, other functions' models) stays out of sight
      platform.MODEL_PATH = join(MODEL_MOUNT, basename(model.file));
      binds.push({ src: model.file, dst: platform.MODEL_PATH, readOnly: true });
    }
    if (manifest.dir) platform[IMAGE_DIR_ENV] = manifest.dir; // the store's collector sees the version in use
    const extra = { ...this.host.extraEnv };
    if (extra.MLFAAS_TOKEND_SOCKET) {
      binds.push({ src: dirname(extra.MLFAAS_TOKEND_SOCKET), dst: SANDBOX_PATHS.tokend, readOnly: true });
      extra.MLFAAS_TOKEND_SOCKET = join(SANDBOX_PATHS.tokend, basename(extra.MLFAAS_TOKEND_SOCKET));
    }
    for (const b of gpu?.binds ?? []) if (!binds.some((x) => x.dst === b.dst)) binds.push(b);
    const mps = gpu?.env.CUDA_MPS_PIPE_DIRECTORY;
    if (mps && existsSync(mps)) {
      binds.push({ src: mps, dst: mps, readOnly: false }); // the same path inside
      // the MPS daemon's /dev/shm (mps.ts): client and server share memory through it
      const shm = join(dirname(mps), 'shm');
      if (existsSync(shm)) binds.push({ src: shm, dst: '/dev/shm', readOnly: false });
    }
    Object.assign(env, extra, gpu?.env, platform, {
      HOME: SANDBOX_PATHS.run,
      MLFAAS_SOCKET: inside,
      MLFAAS_SECRETS_DIR: SANDBOX_PATHS.secrets,
    });
    const limits = spec.limits ?? {};
    const cgroupProcs =
      iso.cgroups?.create(this.id, {
        memoryBytes: limits.memory ? memoryBytes(limits.memory) : iso.limits.memoryBytes,
        cpuCores: limits.cpu ? cpuCores(limits.cpu) : undefined,
        pids: iso.limits.pids,
      }) ?? [];
    const sandbox: SandboxPlan = {
      uid: uid!,
      gid: uid!,
      cgroupProcs,
      binds,
      tmpfs: privateTmpfs(iso.limits.tmpBytes, true),
      devices: gpu ? gpuDevices() : undefined,
      cwd: manifest.dir ? SANDBOX_PATHS.function : SANDBOX_PATHS.run,
      preload: gpu?.preload,
      listen: { socket: this.plannedSocket, port: SANDBOX_PORT, unix: inside },
      hostname: this.id.slice(0, 63),
      veth: iso.egress?.attach(this.id),
    };
    return { env, sandbox };
  }

  /**
   * The function's model fetched by URI into the node's cache (verified), or undefined when its
   * model is in its image. A fetch that fails (unreachable, checksum mismatch) fails the start:
   * the replica crashes with the reason as its lastError, and an update to it stalls.
   */
  private async modelFile(source: ModelSource | undefined): Promise<{ file: string; version: string } | undefined> {
    if (!source) return undefined;
    if (!this.host.models) throw new Error(`the function's model is named by URI (${source.uri}) but this node has no model cache`);
    const version = modelVersionOf(source.sha256);
    this.host.log(this.id, `model ${version}: from ${source.uri}`);
    const file = await this.host.models.acquire(source, this.id);
    this.modelPath = file;
    return { file, version };
  }

  private spawn(env: Record<string, string>, sandbox?: SandboxPlan): void {
    const { manifest, spec } = this.plan;
    const watchdog = sandbox ? platformPath(WATCHDOG) : WATCHDOG;
    const cmd =
      manifest.mode === 'classic'
        ? [process.execPath, '-r', 'tsx/cjs', watchdog]
        : ['/bin/sh', '-c', `exec ${spec.envProcess || manifest.fprocess}`];
    // the replica dies with its agent, even when the agent is SIGKILLed
    const argv = sandbox ? sandboxArgv(sandbox, cmd) : tiedToParent(cmd);
    const child = spawn(argv[0], argv.slice(1), {
      cwd: sandbox ? '/' : (manifest.dir ?? this.runDir),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const tail: string[] = []; // this process's last output lines, for lastError
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (l) => {
        this.host.log(this.id, l);
        tail.push(l);
        if (tail.length > KEPT_LINES) tail.shift();
      });
    }
    child.on('error', (e) => this.host.log(this.id, `spawn error: ${e.message}`));
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.functionPid = undefined;
      if (this.stopping) return;
      this.host.log(this.id, `exited (${signal ?? `status ${code}`}); restarting`);
      // output lines still buffered in the pipes arrive after 'exit': wait for them briefly
      void new Promise((r) => setTimeout(r, 50))
        .then(() => {
          this.lastError = summarizeExit(tail, code, signal);
          return this.crashed();
        })
        .catch((e: Error) => this.host.log(this.id, `crash handling failed: ${e.message}`));
    });
  }

  private async waitReady(): Promise<void> {
    const path = this.plan.manifest.readiness ?? this.plan.manifest.health ?? '/_/health';
    const deadline = Date.now() + this.host.readinessTimeoutMs;
    const child = this.child;
    while (!this.stopping && this.child === child && child) {
      // sandboxed (isolation on): the port is in the replica's own network namespace, the socket is the way in
      const sandboxed = !!this.host.isolation;
      const ok = sandboxed ? await probe(`http://localhost${path}`, 1000, this.plannedSocket) : await probe(`http://127.0.0.1:${this.port}${path}`, 1000);
      if (ok) {
        if (this.stopping || this.child !== child) return;
        // sandboxed: the only way in; else runtimes that honour MLFAAS_SOCKET serve there too, and the gateway prefers it
        if (this.plannedSocket && existsSync(this.plannedSocket)) this.socket = this.plannedSocket;
        if (sandboxed && child.pid) this.functionPid = sandboxedFunctionPid(child.pid);
        this.state = 'ready';
        this.lastError = undefined;
        await this.host.publish(this.info());
        return;
      }
      if (Date.now() > deadline) {
        this.host.log(this.id, `not ready after ${this.host.readinessTimeoutMs} ms; killing`);
        child.kill('SIGKILL');
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async crashed(): Promise<void> {
    if (this.stopping) return;
    this.state = 'crashed';
    const delay = BACKOFF_MS[Math.min(this.restarts, BACKOFF_MS.length - 1)];
    this.restarts++;
    await this.host.publish(this.info());
    this.restartTimer = setTimeout(() => void this.start().catch((e: Error) => this.host.log(this.id, `restart failed: ${e.message}`)), delay);
  }

  /** Leave the balancers, wait `drainMs`, SIGTERM, SIGKILL after the grace period, unpublish. */
  async stop(opts: { drain: boolean } = { drain: true }): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (opts.drain && child && this.state === 'ready') {
      this.state = 'draining';
      await this.host.publish(this.info());
      await new Promise((r) => setTimeout(r, this.host.drainMs));
    }
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), this.host.terminationGraceMs);
      await exited;
      clearTimeout(t);
    }
    await this.host.unpublish(this.id);
    this.host.gpus?.release(this.id);
    this.host.models?.release(this.id);
    this.host.isolation?.egress?.release(this.id);
    rmSync(this.runDir, { recursive: true, force: true });
    await this.host.isolation?.cgroups?.remove(this.id);
  }
}
