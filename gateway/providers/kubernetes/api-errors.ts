/** The Kubernetes API's answers the provider expects, as values rather than exceptions. */
import { ApiException } from '@kubernetes/client-node';

/** The HTTP status of an API error, or undefined for anything else (a network error). */
export const apiCode = (e: unknown): number | undefined => (e instanceof ApiException ? e.code : undefined);

/**
 * The call's answer, or undefined when the API answered one of `codes` (404: not there; 409: there
 * already, or changed meanwhile). Any other error is thrown.
 */
export async function unless<T>(call: Promise<T>, ...codes: number[]): Promise<T | undefined> {
  try {
    return await call;
  } catch (e) {
    if (codes.includes(apiCode(e) ?? -1)) return undefined;
    throw e;
  }
}
