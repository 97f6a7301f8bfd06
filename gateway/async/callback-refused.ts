/**
 * A callback the policy refuses (as written, or by what its host resolved to). Permanent: the
 * worker fails the job at once instead of retrying it.
 */
export class CallbackRefused extends Error {
  constructor(reason: string) {
    super(`callback refused: ${reason}`);
    this.name = 'CallbackRefused';
  }
}
