/**
 * The function answered one of its retry codes (`com.openfaas.retry.codes`) and attempts remain:
 * thrown from the async worker's processor so that BullMQ keeps the job in Redis (its delayed
 * set) and runs it again after the function's back-off (`retryDelayMs`).
 */
export class FunctionRetry extends Error {
  override readonly name = 'FunctionRetry';
  constructor(
    /** The function's status. */
    readonly status: number,
    /** Its `Retry-After`, seconds, when it sent one in delay-seconds form. */
    readonly retryAfterS?: number,
  ) {
    super(`the function answered ${status}: retried (com.openfaas.retry.codes)`);
  }
}
