import { randomUUID } from 'node:crypto';
import { Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import type Redis from 'ioredis';
import type { IncomingHttpHeaders } from 'node:http';
import { ErrorCode, functionNotFound, invalid, PlatformError, toHttp } from '../errors';
import { FunctionRef } from '../lib/names';
import { patientDuplicate } from '../lib/redis-health';
import { keys } from '../registry/keys';
import { FunctionState } from '../proxy/function-state';
import { Invoker } from '../proxy/invoker';
import { FunctionRouter } from '../proxy/router';
import { deliverCallback, ResolveAll } from './callback-delivery';
import { checkCallbackUrl } from './callback-policy';
import { CallbackRefused } from './callback-refused';
import { FunctionRetry } from './function-retry';
import { DEFAULT_RETRY_CODES, parseRetryPolicy, retryDelayMs, RetryPolicy } from '../registry/timeouts-spec';
import type { GatewayMetrics } from '../metrics/gateway-metrics';

/** What is stored in Redis for one accepted async invocation. */
export interface AsyncJob {
  ref: FunctionRef;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** base64 */
  body: string;
  callId: string;
  callbackUrl?: string;
  /**
   * The function's retry policy at enqueue (com.openfaas.retry.*): its answers with one of
   * `codes` are retried after `retryDelayMs`. Absent on jobs queued before issue 25: not retried.
   */
  retry?: Omit<RetryPolicy, 'attempts'>;
  /** Set once the function answered, so a retried callback does not invoke it again. */
  result?: { status: number; contentType?: string; body: string; /** the invocation's duration, s */ durationS?: number; retryAfterS?: number };
}

export interface AsyncOptions {
  concurrency: number;
  lockMs: number;
  attempts: number;
  callbackTimeoutMs: number;
  /** Hosts (`host` or `host:port`) callbacks may go to; empty = any the policy does not refuse. */
  callbackAllow: string[];
  /** Resolves callback host names at delivery; the system resolver when absent (tests map names). */
  lookup?: ResolveAll;
  /** Wait before the first retry of a function's retry code, ms (OpenFaaS Pro's initialRetryWait: 10 s). */
  retryMinWaitMs?: number;
  /** Longest wait between retries, ms (OpenFaaS Pro's maxRetryWait: 120 s). */
  retryMaxWaitMs?: number;
  /** Counts retries of functions' answers (mlfaas_async_retries_total). */
  metrics?: GatewayMetrics;
}

/** Back-off of gateway-side failures (no replica, queue full, callback not delivered): 500 ms doubled per retry. */
const GATEWAY_BACKOFF_MS = 500;

/**
 * BullMQ's custom back-off: a function's retry code waits its own policy's delay (min_wait
 * doubled per retry up to max_wait, or its Retry-After within them); anything else the
 * gateway's 500 ms exponential. Pure.
 */
export function asyncBackoffMs(retry: number, err: Error | undefined, job: Pick<AsyncJob, 'retry'> | undefined): number {
  if (err instanceof FunctionRetry && job?.retry) return retryDelayMs(job.retry, retry, err.retryAfterS);
  return Math.round(GATEWAY_BACKOFF_MS * 2 ** Math.max(0, retry - 1));
}

/** A `Retry-After` in delay-seconds form, else undefined (HTTP dates are not read). */
function retryAfterSeconds(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s !== undefined && /^\s*\d{1,9}\s*$/.test(s) ? Number(s) : undefined;
}

/** Request headers carried to the function (the rest are the async caller's transport). */
const KEEP = /^(content-type|accept|x-(?!callback-url$)[a-z0-9-]+)$/;

const secondsSince = (startHr: bigint) => Number(process.hrtime.bigint() - startHr) / 1e9;

/** Transient gateway-side failures worth another attempt. */
const RETRY = new Set([ErrorCode.NoReplicas, ErrorCode.QueueFull, ErrorCode.UpstreamUnavailable, ErrorCode.UpstreamTimeout]);

/**
 * `/async-function/*`: accepted invocations are BullMQ jobs in Redis before the 202 is sent; a
 * worker invokes the function and POSTs the result to `X-Callback-Url` with `X-Function-Status`,
 * `X-Function-Name`, `X-Call-Id` and `X-Duration-Seconds`. The URL goes through the callback
 * policy (`callback-policy.ts`) before anything is queued: a refused one is a 400. At delivery
 * its host is resolved and every address judged, and the POST goes to the vetted address
 * (`callback-delivery.ts`); a callback refused then fails its job at once (BullMQ's failed set,
 * with the reason, like a callback that failed every attempt), without re-invoking or retrying.
 *
 * Guarantee: at-least-once. A job is in Redis (AOF) when the caller gets 202. If the gateway
 * dies mid-job, its lock expires after `lockMs` and another worker (or this one after restart)
 * runs it again; the function's result is saved before the callback, so a failed callback is
 * retried without re-invoking, but a crash between invoking and saving re-invokes.
 */
export class AsyncInvocations {
  readonly queue: Queue<AsyncJob>;
  private worker?: Worker<AsyncJob>;
  private workerConn?: Redis;
  /**
   * Jobs whose callback this gateway delivered (id → when). A job that comes back because its
   * completion could not be recorded (Redis away past the lock) is not delivered twice by us.
   */
  private delivered = new Map<string, number>();

  constructor(
    private readonly connection: Redis,
    private readonly invoker: Invoker,
    private readonly router: FunctionRouter,
    private readonly opts: AsyncOptions,
  ) {
    this.queue = new Queue<AsyncJob>(keys.asyncQueue, { connection });
    this.queue.on('error', () => undefined); // an outage is answered per request (503), not logged per reconnect
  }

  /** The validated `X-Callback-Url` (undefined when absent or empty); 400 naming the header when refused. */
  callbackUrlOf(headers: IncomingHttpHeaders): string | undefined {
    const cb = headers['x-callback-url'];
    if (typeof cb !== 'string' || cb === '') return undefined;
    const v = checkCallbackUrl(cb, this.opts.callbackAllow);
    if (!v.ok) throw invalid('X-Callback-Url', v.reason);
    return cb;
  }

  /** The function's retry policy: its `com.openfaas.retry.*` annotations over the gateway's defaults. */
  policyOf(annotations: Record<string, string> | undefined): RetryPolicy {
    const maxWaitMs = this.opts.retryMaxWaitMs ?? 120_000;
    const minWaitMs = Math.min(this.opts.retryMinWaitMs ?? 10_000, maxWaitMs);
    const defaults = { attempts: this.opts.attempts, codes: DEFAULT_RETRY_CODES, minWaitMs, maxWaitMs };
    try {
      return parseRetryPolicy(annotations, defaults);
    } catch {
      return defaults; // validated at deploy: a stored spec that no longer parses gets the defaults
    }
  }

  /** `annotations`: the function's, for its retry policy (com.openfaas.retry.*). */
  async enqueue(ref: FunctionRef, method: string, path: string, headers: IncomingHttpHeaders, body: Buffer, callId: string,
    annotations?: Record<string, string>): Promise<void> {
    const kept: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (KEEP.test(k) && typeof v === 'string') kept[k] = v;
    const { attempts, ...retry } = this.policyOf(annotations);
    const job: AsyncJob = { ref, method, path, headers: kept, body: body.toString('base64'), callId, retry };
    const cb = this.callbackUrlOf(headers);
    if (cb) job.callbackUrl = cb;
    // X-Call-Id is a tracing id, not an idempotency key (and BullMQ rejects numeric or ':' ids)
    await this.queue.add('invoke', job, {
      jobId: randomUUID(),
      attempts,
      backoff: { type: 'custom' },
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  startWorker(): void {
    // BullMQ workers need maxRetriesPerRequest: null and wait out an outage; the queue (enqueue,
    // on the request path's fail-fast connection) refuses at once instead of replaying later
    this.workerConn = patientDuplicate(this.connection);
    this.worker = new Worker<AsyncJob>(keys.asyncQueue, (job) => this.process(job), {
      connection: this.workerConn,
      concurrency: this.opts.concurrency,
      lockDuration: this.opts.lockMs,
      stalledInterval: this.opts.lockMs,
      maxStalledCount: 10,
      settings: {
        backoffStrategy: (n: number, _type?: string, err?: Error, job?: { data: unknown }) => asyncBackoffMs(n, err, job?.data as AsyncJob | undefined),
      },
    });
    this.worker.on('error', () => undefined);
  }

  private async process(job: Job<AsyncJob>): Promise<{ status: number }> {
    const d = job.data;
    if (job.id && this.delivered.has(job.id)) return { status: d.result?.status ?? 200 };
    let result = d.result;
    if (!result) {
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? this.opts.attempts);
      result = await this.invoke(d, lastAttempt);
      // the function's own retry code, attempts left: BullMQ keeps the job and runs it again after
      // the back-off; the last attempt's answer, whatever it is, goes to the callback
      if (!lastAttempt && d.retry?.codes.includes(result.status)) {
        this.opts.metrics?.asyncRetries.inc({ function_name: `${d.ref.name}.${d.ref.namespace}`, code: String(result.status) });
        throw new FunctionRetry(result.status, result.retryAfterS);
      }
      if (d.callbackUrl) await job.updateData({ ...d, result }); // a retried callback must not re-invoke
    }
    if (d.callbackUrl) {
      const headers: Record<string, string> = {
        'X-Function-Status': String(result.status),
        'X-Function-Name': d.ref.name,
        'X-Call-Id': d.callId,
      };
      if (result.durationS !== undefined) headers['X-Duration-Seconds'] = result.durationS.toFixed(6);
      if (result.contentType) headers['Content-Type'] = result.contentType;
      const opts = { timeoutMs: this.opts.callbackTimeoutMs, allow: this.opts.callbackAllow, resolve: this.opts.lookup };
      try {
        await deliverCallback(d.callbackUrl, Buffer.from(result.body, 'base64'), headers, opts);
      } catch (e) {
        // refused (a job queued under another allow-list, or a host resolving to metadata): final
        if (e instanceof CallbackRefused) throw new UnrecoverableError(e.message);
        throw e;
      }
      if (job.id) this.remember(job.id);
    }
    return { status: result.status };
  }

  private async invoke(d: AsyncJob, lastAttempt: boolean): Promise<NonNullable<AsyncJob['result']>> {
    const startHr = process.hrtime.bigint();
    try {
      const st = await this.router.state(d.ref);
      if (!(st instanceof FunctionState)) throw functionNotFound(d.ref.name, d.ref.namespace);
      const inv = { ref: d.ref, method: d.method, path: d.path, headers: d.headers, body: Buffer.from(d.body, 'base64'), callId: d.callId };
      const { upstream, response } = await this.invoker.send(st, inv);
      this.opts.metrics?.inference.answered(st.label, response.statusCode, response.headers);
      const chunks: Buffer[] = [];
      let status = 502;
      try {
        for await (const c of response.body) chunks.push(c as Buffer);
        status = response.statusCode;
      } finally {
        this.invoker.finish(st, upstream, status, startHr); // the slot is freed whatever the body did
      }
      if (status === 502 && response.statusCode !== 502) throw new PlatformError(ErrorCode.UpstreamUnavailable, 'replica failed mid-response');
      const ct = response.headers['content-type'];
      const after = retryAfterSeconds(response.headers['retry-after']);
      return { status, body: Buffer.concat(chunks).toString('base64'), durationS: secondsSince(startHr), ...(ct ? { contentType: ct } : {}),
        ...(after !== undefined ? { retryAfterS: after } : {}) };
    } catch (e) {
      if (e instanceof PlatformError && RETRY.has(e.code) && !lastAttempt) throw e;
      const h = toHttp(e);
      const body = Buffer.from(JSON.stringify(h.body)).toString('base64');
      return { status: h.status, contentType: 'application/json', body, durationS: secondsSince(startHr) };
    }
  }

  private remember(id: string): void {
    this.delivered.set(id, Date.now());
    if (this.delivered.size > 10_000) this.delivered.delete(this.delivered.keys().next().value!);
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
    this.workerConn?.disconnect();
  }
}
