import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../../config';
import { childEnv, tiedToParent } from '../../lib/process';
import { FunctionRef } from '../../lib/names';
import { FunctionSpec } from '../../registry/function-spec';
import { ReplicaInfo, ReplicaState } from '../../registry/registry';
import { KEPT_LINES, summarizeExit } from './exit-summary';
import { freePort } from './free-port';
import { ImageManifest } from './image-store';

/** What a replica needs to know about its function, fixed for its lifetime. */
export interface ReplicaPlan {
  ref: FunctionRef;
  spec: FunctionSpec;
  manifest: ImageManifest;
  /** Identifies the spec version; replicas of an older version are replaced on update. */
  specHash: string;
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
  readSecret(namespace: string, name: string): Promise<string | undefined>;
}

const WATCHDOG = join(__dirname, 'classic-watchdog.ts');
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 16000, 30000];

function probe(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get(url, { timeout: timeoutMs }, (res) => {
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
  private child?: ChildProcess;
  private port = 0;
  private restarts = 0;
  private stopping = false;
  private startedAt = new Date().toISOString();
  private restartTimer?: NodeJS.Timeout;
  private socket?: string;
  private plannedSocket?: string;
  private lastError?: string;

  constructor(
    readonly id: string,
    readonly plan: ReplicaPlan,
    private readonly host: ReplicaHost,
  ) {}

  get isStopping(): boolean {
    return this.stopping;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  info(): ReplicaInfo {
    return {
      id: this.id,
      url: `http://127.0.0.1:${this.port}`,
      ...(this.socket ? { socket: this.socket } : {}),
      state: this.state,
      agent: this.host.agentId,
      pid: this.child?.pid,
      startedAt: this.startedAt,
      restarts: this.restarts,
      weight: this.weight,
      quota: this.quota,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  async start(): Promise<void> {
    if (this.stopping) return;
    this.state = 'starting';
    this.startedAt = new Date().toISOString();
    try {
      const env = await this.environment();
      this.port = await freePort();
      env.PORT = String(this.port);
      this.socket = undefined;
      const sockDir = join(this.host.dataDir, 'sockets');
      mkdirSync(sockDir, { recursive: true });
      env.MLFAAS_SOCKET = this.plannedSocket = join(sockDir, `${this.id}.sock`);
      if (this.stopping) return; // stopped while we awaited: never spawn an orphan
      this.spawn(env);
    } catch (e) {
      this.host.log(this.id, `failed to start: ${(e as Error).message}`);
      this.lastError = `failed to start: ${(e as Error).message}`;
      await this.crashed();
      return;
    }
    await this.host.publish(this.info());
    await this.waitReady();
  }

  private async environment(): Promise<Record<string, string>> {
    const { spec, manifest, ref } = this.plan;
    const env: Record<string, string> = {
      ...childEnv(),
      ...this.host.extraEnv,
      ...spec.envVars,
      HOST: '127.0.0.1',
      NODE_PATH: join(REPO_ROOT, 'node_modules'),
      MLFAAS_FUNCTION_NAME: ref.name,
      MLFAAS_NAMESPACE: ref.namespace,
      MLFAAS_REPLICA_ID: this.id,
    };
    if (spec.ml.maxBatchSize) env.MAX_BATCH_SIZE = String(spec.ml.maxBatchSize);
    if (spec.ml.model && !env.MODEL_PATH) env.MODEL = spec.ml.model;
    const fprocess = spec.envProcess || manifest.fprocess;
    if (manifest.mode === 'classic') {
      if (!fprocess) throw new Error('a classic-watchdog image needs fprocess (envProcess)');
      env.fprocess = fprocess;
    }
    if (spec.secrets?.length) {
      const dir = join(this.host.dataDir, 'secrets', ref.namespace, ref.name);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const name of spec.secrets) {
        const value = await this.host.readSecret(ref.namespace, name);
        if (value === undefined) {
          // faas-cli deploys before `secret create` in common flows; start, and say so in the logs
          this.host.log(this.id, `warning: secret "${name}" not found in namespace ${ref.namespace}; starting without it`);
          continue;
        }
        writeFileSync(join(dir, name), Buffer.from(value, 'base64'), { mode: 0o600 });
      }
      env.MLFAAS_SECRETS_DIR = dir;
    }
    return env;
  }

  private spawn(env: Record<string, string>): void {
    const { manifest, spec } = this.plan;
    const cmd =
      manifest.mode === 'classic'
        ? [process.execPath, '-r', 'tsx/cjs', WATCHDOG]
        : ['sh', '-c', `exec ${spec.envProcess || manifest.fprocess}`];
    // the replica dies with its agent, even when the agent is SIGKILLed
    const argv = tiedToParent(cmd);
    const child = spawn(argv[0], argv.slice(1), {
      cwd: manifest.dir ?? this.host.dataDir,
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
      if (await probe(`http://127.0.0.1:${this.port}${path}`, 1000)) {
        if (this.stopping || this.child !== child) return;
        // runtimes that honour MLFAAS_SOCKET serve there too; the gateway prefers it
        if (this.plannedSocket && existsSync(this.plannedSocket)) this.socket = this.plannedSocket;
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
    if (this.socket) rmSync(this.socket, { force: true });
  }
}
