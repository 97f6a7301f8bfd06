import type Redis from 'ioredis';
import { CappedList } from '../lib/capped-list';

/** A training job the admission refused (a 409 answer, not a dry run), as `GET /system/jobs/refusals` lists it. */
export interface JobRefusal {
  /** RFC3339: when it was refused */
  time: string;
  function: string;
  namespace: string;
  /** The deadline asked for (RFC3339), absent for a best-effort job */
  requestedDeadline?: string;
  /** The earliest deadline that could be guaranteed then (RFC3339), null when none could */
  earliestFeasibleDeadline: string | null;
  /** The same, as seconds after the refusal */
  earliestFeasibleDeadlineSeconds: number | null;
  /** The 409's message: why */
  reason: string;
  /** The 409's error code (`deadline_infeasible`, or `conflict` when the cluster has no training capacity) */
  code: string;
  maxWorkers?: number;
}

const KEY = 'mlfaas:job-refusals';
/** Refusals kept, newest first. */
export const REFUSALS_KEPT = 200;

/** The last {@link REFUSALS_KEPT} refusals, in one Redis list (newest first), shared by every gateway. */
export class RefusalStore {
  private readonly store: CappedList<JobRefusal>;

  constructor(redis: Redis, kept = REFUSALS_KEPT) {
    this.store = new CappedList<JobRefusal>(redis, kept);
  }

  async add(r: JobRefusal): Promise<void> {
    await this.store.push(KEY, r);
  }

  /** Newest first, at most `limit`. */
  async list(limit = this.store.kept): Promise<JobRefusal[]> {
    return this.store.range(KEY, limit);
  }
}
