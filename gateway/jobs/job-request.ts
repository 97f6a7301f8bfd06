import { invalid } from '../errors';
import { checkDnsLabel, DEFAULT_NAMESPACE, splitQualified } from '../lib/names';
import { parseRfc3339 } from '../lib/rfc3339';
import { checkDatasetName, checkModelName } from '../lib/training-names';
import type { Seconds } from '../ports/training-scheduler';

/**
 * A validated `POST /system/jobs` body. Deadlines are absolute epoch seconds (`Seconds`, the
 * platform clock's ms / 1000, whole ms): the unit admission plans in, from here to the scheduler.
 */
export interface JobRequest {
  function: string;
  namespace: string;
  model?: string;
  dataset?: string;
  /** Training length in epochs (the API's `length`). */
  epochs?: number;
  /** Or in optimizer steps at `batchSize`. */
  iterations?: number;
  /** Absent = best-effort. */
  deadlineS?: Seconds;
  softDeadlineS?: Seconds;
  /** Global batch size. */
  batchSize: number;
  learningRate: number;
  /** Most workers the job may use (default: the cluster's size). */
  maxWorkers?: number;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function posInt(v: unknown, field: string, max = 1e9): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) throw invalid(field, `must be an integer in [1, ${max}], got ${JSON.stringify(v)}`);
  return v;
}

/** Latest deadline accepted: 10 years from now (s). */
export const MAX_DEADLINE_SECONDS = 10 * 365.25 * 24 * 3600;

/** RFC3339 time, or seconds from `now` (a number), in (now, now + 10 years]. Epoch seconds (whole ms, as RFC3339 keeps them). */
function when(v: unknown, field: string, nowMs: number): Seconds {
  let t: number;
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v <= 0 || v > MAX_DEADLINE_SECONDS) {
      throw invalid(field, `seconds from now must be a number in (0, ${MAX_DEADLINE_SECONDS}] (10 years), got ${v}`);
    }
    t = nowMs + v * 1000;
  } else if (typeof v === 'string') {
    const p = parseRfc3339(v);
    if (p === undefined) throw invalid(field, `${JSON.stringify(v)} is not a valid RFC3339 time (e.g. 2030-01-31T12:00:00Z) or a number of seconds from now`);
    t = p;
  } else {
    throw invalid(field, 'must be an RFC3339 time or a number of seconds from now');
  }
  if (!(t > nowMs)) throw invalid(field, `${new Date(t).toISOString()} is not in the future (now is ${new Date(nowMs).toISOString()})`);
  if (t > nowMs + MAX_DEADLINE_SECONDS * 1000) throw invalid(field, `${new Date(t).toISOString()} is more than 10 years from now`);
  return Math.trunc(t) / 1000;
}

/** Validates a job submission; every error names its field. */
export function parseJobRequest(body: unknown, nowMs: number): JobRequest {
  if (!isObj(body)) throw invalid('body', 'must be a JSON object');
  if (typeof body.function !== 'string' || body.function === '') throw invalid('function', 'the training function name is required');
  if (body.namespace !== undefined && typeof body.namespace !== 'string') throw invalid('namespace', 'must be a string');
  const ref = splitQualified(body.function, typeof body.namespace === 'string' && body.namespace ? body.namespace : DEFAULT_NAMESPACE);
  checkDnsLabel(ref.name, 'function');
  checkDnsLabel(ref.namespace, 'namespace');
  const hasLen = body.length !== undefined;
  const hasIter = body.iterations !== undefined;
  if (hasLen === hasIter) throw invalid('length', 'give exactly one of length (epochs) and iterations');
  const req: JobRequest = {
    function: ref.name,
    namespace: ref.namespace,
    batchSize: body.batch_size === undefined ? 32 : posInt(body.batch_size, 'batch_size', 65536),
    learningRate: 0.1,
  };
  if (hasLen) req.epochs = posInt(body.length, 'length', 100000);
  if (hasIter) req.iterations = posInt(body.iterations, 'iterations');
  if (body.learning_rate !== undefined) {
    if (typeof body.learning_rate !== 'number' || !Number.isFinite(body.learning_rate) || !(body.learning_rate > 0 && body.learning_rate < 100)) {
      throw invalid('learning_rate', `must be a number in (0, 100), got ${JSON.stringify(body.learning_rate)}`);
    }
    req.learningRate = body.learning_rate;
  }
  if (body.model !== undefined) req.model = checkModelName(body.model, 'model');
  if (body.dataset !== undefined) req.dataset = checkDatasetName(body.dataset, 'dataset');
  if (body.deadline !== undefined && body.deadline !== null) req.deadlineS = when(body.deadline, 'deadline', nowMs);
  if (body.soft_deadline !== undefined && body.soft_deadline !== null) req.softDeadlineS = when(body.soft_deadline, 'soft_deadline', nowMs);
  if (body.max_workers !== undefined) req.maxWorkers = posInt(body.max_workers, 'max_workers', 1024);
  return req;
}
