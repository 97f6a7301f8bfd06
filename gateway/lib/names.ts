import { invalid } from '../errors';

/** The namespace functions live in when none is given (OpenFaaS's default). */
export const DEFAULT_NAMESPACE = 'openfaas-fn';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A function's identity: `name` in `namespace`. `key` is `namespace/name`. */
export interface FunctionRef {
  name: string;
  namespace: string;
}

export const refKey = (r: FunctionRef) => `${r.namespace}/${r.name}`;

export function parseRefKey(key: string): FunctionRef {
  const i = key.indexOf('/');
  return { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** Throws a validation error naming `field` unless `value` is a DNS-1123 label (≤ 63 chars). */
export function checkDnsLabel(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw invalid(field, 'must be a non-empty string');
  if (value.length > 63) throw invalid(field, `"${value}" is longer than 63 characters`);
  if (!DNS_LABEL.test(value)) {
    throw invalid(field, `"${value}" must be lower-case letters, digits and '-', starting and ending with a letter or digit`);
  }
  return value;
}

/**
 * Splits an invocation path segment `name[.namespace]` as OpenFaaS does: the part after the
 * last dot is the namespace.
 */
export function splitQualified(segment: string, fallbackNamespace = DEFAULT_NAMESPACE): FunctionRef {
  const dot = segment.lastIndexOf('.');
  if (dot <= 0) return { name: segment, namespace: fallbackNamespace };
  return { name: segment.slice(0, dot), namespace: segment.slice(dot + 1) };
}
