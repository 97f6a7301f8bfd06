/** One request of the bad-input corpus and the exact answer expected. */
export interface Case {
  name: string;
  method: string;
  path: string;
  /** JSON-encoded and sent with `content-type: application/json`. */
  body?: unknown;
  /** Sent as-is (still labelled `application/json`). */
  raw?: string;
  headers?: Record<string, string>;
  status: number;
  /** For a 4xx/5xx: the error code; for a 2xx: absent. */
  code?: string;
  /** For a 4xx: the field the error must name (absent: it must name none). */
  field?: string;
  /**
   * Fixed by the engineer who owns `gateway/jobs/*` (issue 9: training job inputs); expected to
   * fail until that branch is merged.
   */
  ownedBy?: 'jobs';
}

/**
 * The probe gateway's `MLFAAS_MAX_BODY_BYTES`: above every bounded deploy field (a 1 MiB label
 * value must reach the validator to get its 400), so a body over it is a 413.
 */
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024;

/** A body one byte over `BODY_LIMIT_BYTES`. */
export const overBodyLimit = () => 'x'.repeat(BODY_LIMIT_BYTES + 1);

/** A 400 `validation_failed` naming `field`. */
export const invalid = (field: string) => ({ status: 400, code: 'validation_failed', field });

/** A 404 `not_found` (no field). */
export const notFound = { status: 404, code: 'not_found' } as const;

/** A 404 `function_not_found` naming `name`. */
export const fnNotFound = { status: 404, code: 'function_not_found', field: 'name' } as const;

/** A 404 `function_not_found` naming `function` (the jobs API's field). */
export const jobFnNotFound = { status: 404, code: 'function_not_found', field: 'function' } as const;

/** Values of every JSON type but string, for "must be a string" fields. */
export const NOT_STRINGS: unknown[] = [7, true, [], {}, ['x']];

/** Strings that are not DNS-1123 labels (function, namespace and secret names). */
export const BAD_LABELS = ['Bad_Name', 'UPPER', '-x', 'x-', 'a.b', 'a b', 'é', 'a'.repeat(64)];

export const describeValue = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v.length > 24 ? v.slice(0, 21) + '…' : v) : JSON.stringify(v));
