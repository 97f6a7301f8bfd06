import { invalid } from '../errors';
import { checkDnsLabel, DEFAULT_NAMESPACE } from '../lib/names';

/** The body faas-cli sends to POST/PUT /system/functions (OpenFaaS `FunctionDeployment`). */
export interface FunctionDeployment {
  service: string;
  image: string;
  namespace?: string;
  envProcess?: string;
  envVars?: Record<string, string>;
  constraints?: string[];
  secrets?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  limits?: ResourceList;
  requests?: ResourceList;
  readOnlyRootFilesystem?: boolean;
}

export interface ResourceList {
  memory?: string;
  cpu?: string;
}

/** What users set for ML functions (labels or annotations), parsed and validated. */
export interface MlSpec {
  /** `com.openfaas.scale.min`, default 1. */
  minScale: number;
  /** `com.openfaas.scale.max`, default 20 (OpenFaaS's default). */
  maxScale: number;
  /** `com.openfaas.scale.zero`: may the platform scale this function to zero. */
  scaleToZero: boolean;
  /** `mlfaas.model`: model name or path inside the handler folder. */
  model?: string;
  /** `mlfaas.slo.latency_ms`: latency objective in ms. */
  sloLatencyMs?: number;
  /** `mlfaas.slo.percentile`: which percentile the SLO bounds, in (0, 100]; default 99. */
  sloPercentile: number;
  /** `mlfaas.batch.max`: maximum dynamic batch size. */
  maxBatchSize?: number;
  /** `mlfaas.dataset`: training data set (training functions). */
  dataset?: string;
  /** `mlfaas.max_inflight`: concurrent requests one replica is sent before the gateway queues. */
  maxInflight?: number;
}

/** A validated deployment plus the ML fields derived from it. */
export interface FunctionSpec extends FunctionDeployment {
  namespace: string;
  envVars: Record<string, string>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ml: MlSpec;
}

export const ML_KEYS = {
  minScale: 'com.openfaas.scale.min',
  maxScale: 'com.openfaas.scale.max',
  scaleToZero: 'com.openfaas.scale.zero',
  model: 'mlfaas.model',
  sloLatencyMs: 'mlfaas.slo.latency_ms',
  sloPercentile: 'mlfaas.slo.percentile',
  maxBatchSize: 'mlfaas.batch.max',
  dataset: 'mlfaas.dataset',
  maxInflight: 'mlfaas.max_inflight',
} as const;

const DEFAULT_MAX_SCALE = 20;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringMap(v: unknown, field: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw invalid(field, 'must be an object of string values');
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') throw invalid(`${field}.${k}`, `must be a string, got ${typeof val}`);
  }
  return v as Record<string, string>;
}

function stringList(v: unknown, field: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid(field, 'must be an array of strings');
  v.forEach((s, i) => {
    if (typeof s !== 'string') throw invalid(`${field}[${i}]`, `must be a string, got ${typeof s}`);
  });
  return v as string[];
}

function resources(v: unknown, field: string): ResourceList | undefined {
  if (v === undefined || v === null) return undefined;
  const m = stringMap(v, field);
  for (const k of Object.keys(m)) {
    if (k !== 'memory' && k !== 'cpu') throw invalid(`${field}.${k}`, 'unknown resource (memory or cpu)');
  }
  if (m.memory !== undefined && !/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$/.test(m.memory)) {
    throw invalid(`${field}.memory`, `"${m.memory}" is not a quantity like 512Mi`);
  }
  if (m.cpu !== undefined && !/^\d+(\.\d+)?m?$/.test(m.cpu)) {
    throw invalid(`${field}.cpu`, `"${m.cpu}" is not a quantity like 500m or 1`);
  }
  return m;
}

function intField(raw: string | undefined, field: string, min: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw.trim())) throw invalid(field, `"${raw}" is not an integer`);
  const n = Number(raw);
  if (n < min) throw invalid(field, `${n} is below the minimum ${min}`);
  return n;
}

function numField(raw: string | undefined, field: string, lo: number, hi: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n)) throw invalid(field, `"${raw}" is not a number`);
  if (n <= lo || n > hi) throw invalid(field, `${n} must be in (${lo}, ${hi}]`);
  return n;
}

/** Looks a key up in annotations first, then labels; returns where it was found for messages. */
function lookup(d: { labels: Record<string, string>; annotations: Record<string, string> }, key: string) {
  if (key in d.annotations) return { value: d.annotations[key], field: `annotations.${key}` };
  if (key in d.labels) return { value: d.labels[key], field: `labels.${key}` };
  return { value: undefined, field: `labels.${key}` };
}

export function parseMlSpec(labels: Record<string, string>, annotations: Record<string, string>): MlSpec {
  const d = { labels, annotations };
  const get = (k: string) => lookup(d, k);
  const min = get(ML_KEYS.minScale);
  const max = get(ML_KEYS.maxScale);
  const minScale = intField(min.value, min.field, 0) ?? 1;
  const maxScale = intField(max.value, max.field, 1) ?? Math.max(DEFAULT_MAX_SCALE, minScale);
  if (minScale > maxScale) throw invalid(min.field, `min_scale ${minScale} exceeds max_scale ${maxScale}`);
  const zero = get(ML_KEYS.scaleToZero);
  if (zero.value !== undefined && zero.value !== 'true' && zero.value !== 'false') {
    throw invalid(zero.field, `"${zero.value}" must be "true" or "false"`);
  }
  const slo = get(ML_KEYS.sloLatencyMs);
  const pct = get(ML_KEYS.sloPercentile);
  const batch = get(ML_KEYS.maxBatchSize);
  const inflight = get(ML_KEYS.maxInflight);
  const spec: MlSpec = {
    minScale,
    maxScale,
    scaleToZero: zero.value === 'true' || minScale === 0,
    sloPercentile: numField(pct.value, pct.field, 0, 100) ?? 99,
  };
  const model = get(ML_KEYS.model).value;
  if (model !== undefined) spec.model = model;
  const dataset = get(ML_KEYS.dataset).value;
  if (dataset !== undefined) spec.dataset = dataset;
  const sloMs = numField(slo.value, slo.field, 0, 3_600_000);
  if (sloMs !== undefined) spec.sloLatencyMs = sloMs;
  const mb = intField(batch.value, batch.field, 1);
  if (mb !== undefined) spec.maxBatchSize = mb;
  const mi = intField(inflight.value, inflight.field, 1);
  if (mi !== undefined) spec.maxInflight = mi;
  return spec;
}

/**
 * Validates a deployment body as faas-cli sends it. Throws a validation error naming the first
 * bad field; unknown top-level fields are ignored, as OpenFaaS does.
 */
export function parseDeployment(body: unknown): FunctionSpec {
  if (!isObject(body)) throw invalid('body', 'must be a JSON object');
  const service = checkDnsLabel(body.service, 'service');
  if (typeof body.image !== 'string' || body.image.trim() === '') {
    throw invalid('image', 'must be a non-empty string');
  }
  const namespace =
    body.namespace === undefined || body.namespace === '' ? DEFAULT_NAMESPACE : checkDnsLabel(body.namespace, 'namespace');
  if (body.envProcess !== undefined && typeof body.envProcess !== 'string') {
    throw invalid('envProcess', 'must be a string');
  }
  if (body.readOnlyRootFilesystem !== undefined && typeof body.readOnlyRootFilesystem !== 'boolean') {
    throw invalid('readOnlyRootFilesystem', 'must be a boolean');
  }
  const labels = stringMap(body.labels, 'labels');
  const annotations = stringMap(body.annotations, 'annotations');
  const secrets = stringList(body.secrets, 'secrets');
  secrets?.forEach((s, i) => checkDnsLabel(s, `secrets[${i}]`));
  const spec: FunctionSpec = {
    service,
    image: body.image,
    namespace,
    envVars: stringMap(body.envVars, 'envVars'),
    labels,
    annotations,
    ml: parseMlSpec(labels, annotations),
  };
  if (body.envProcess !== undefined) spec.envProcess = body.envProcess as string;
  const constraints = stringList(body.constraints, 'constraints');
  if (constraints) spec.constraints = constraints;
  if (secrets) spec.secrets = secrets;
  const limits = resources(body.limits, 'limits');
  if (limits) spec.limits = limits;
  const requests = resources(body.requests, 'requests');
  if (requests) spec.requests = requests;
  if (body.readOnlyRootFilesystem !== undefined) spec.readOnlyRootFilesystem = body.readOnlyRootFilesystem as boolean;
  return spec;
}
