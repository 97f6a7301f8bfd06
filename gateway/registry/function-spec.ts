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
  /** `mlfaas.gpu`: GPUs per replica (0 or 1: the limiter meters one device). */
  gpus?: number;
  /** `mlfaas.gpu.sm_share`: SM share of its GPU, (0, 1] (MPS active thread percentage / 100). */
  gpuSmShare?: number;
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
  gpus: 'mlfaas.gpu',
  gpuSmShare: 'mlfaas.gpu.sm_share',
} as const;

const DEFAULT_MAX_SCALE = 20;

/** Upper bounds of the numeric ML fields (documented in the README's "Function fields" table). */
export const ML_BOUNDS = {
  /** `com.openfaas.scale.min` and `com.openfaas.scale.max`: replicas of one function. */
  scale: 1000,
  /** `mlfaas.batch.max`: requests in one dynamic batch. */
  batch: 4096,
  /** `mlfaas.max_inflight`: concurrent requests sent to one replica. */
  inflight: 65536,
} as const;

/** Longest image reference accepted (Docker's limit on a repository name). */
const MAX_IMAGE_LENGTH = 255;

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

/**
 * Variables the platform sets in every function process (its socket, its token daemon, the
 * limiter it injects). A function may not set them: the platform's value is the one that counts.
 */
const RESERVED_ENV = [/^MLFAAS_/, /^TL_/, /^LD_PRELOAD$/, /^CUDA_MPS_/];

function envVars(v: unknown, field: string): Record<string, string> {
  const m = stringMap(v, field);
  for (const k of Object.keys(m)) {
    if (RESERVED_ENV.some((re) => re.test(k))) throw invalid(`${field}.${k}`, 'is set by the platform and cannot be overridden');
  }
  return m;
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

function intField(raw: string | undefined, field: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw.trim())) throw invalid(field, `"${raw}" is not an integer`);
  const n = Number(raw);
  if (n < min) throw invalid(field, `${n} is below the minimum ${min}`);
  if (n > max) throw invalid(field, `${raw.trim()} is above the maximum ${max}`);
  return n;
}

/**
 * A path a function names relative to its own files (`mlfaas.model`, `mlfaas.dataset`): not
 * absolute, no `..` segment, no NUL, so it cannot leave the function's or the store's directory.
 */
function relativePath(raw: string | undefined, field: string): string | undefined {
  if (raw === undefined) return undefined;
  if (raw === '' || raw.includes('\0')) throw invalid(field, 'must be a non-empty path without NUL');
  if (raw.startsWith('/')) throw invalid(field, `"${raw}" must be relative (absolute paths are not allowed)`);
  if (raw.split(/[/\\]/).includes('..')) throw invalid(field, `"${raw}" must not contain a ".." segment`);
  return raw;
}

/**
 * An image reference (`[registry/]path[:tag][@digest]`) that names a directory inside the image
 * store: no `.` or `..` or empty path segment, not absolute, no backslash, whitespace or control
 * character.
 */
export function checkImageRef(v: unknown, field = 'image'): string {
  if (typeof v !== 'string' || v.trim() === '') throw invalid(field, 'must be a non-empty string');
  if (v.length > MAX_IMAGE_LENGTH) throw invalid(field, `is longer than ${MAX_IMAGE_LENGTH} characters`);
  if (/[\s\\\x00-\x1f\x7f]/.test(v)) throw invalid(field, `"${v}" must not contain whitespace, backslashes or control characters`);
  if (v.startsWith('/')) throw invalid(field, `"${v}" is a path, not an image reference`);
  const bad = v.split('/').find((seg) => seg === '' || seg === '.' || seg === '..' || /^\.\.?[:@]/.test(seg));
  if (bad !== undefined) throw invalid(field, `"${v}" has an empty, "." or ".." path segment`);
  return v;
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
  const minScale = intField(min.value, min.field, 0, ML_BOUNDS.scale) ?? 1;
  const maxScale = intField(max.value, max.field, 1, ML_BOUNDS.scale) ?? Math.max(DEFAULT_MAX_SCALE, minScale);
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
  const modelAt = get(ML_KEYS.model);
  const model = relativePath(modelAt.value, modelAt.field);
  if (model !== undefined) spec.model = model;
  const datasetAt = get(ML_KEYS.dataset);
  const dataset = relativePath(datasetAt.value, datasetAt.field);
  if (dataset !== undefined) spec.dataset = dataset;
  const sloMs = numField(slo.value, slo.field, 0, 3_600_000);
  if (sloMs !== undefined) spec.sloLatencyMs = sloMs;
  const mb = intField(batch.value, batch.field, 1, ML_BOUNDS.batch);
  if (mb !== undefined) spec.maxBatchSize = mb;
  const mi = intField(inflight.value, inflight.field, 1, ML_BOUNDS.inflight);
  if (mi !== undefined) spec.maxInflight = mi;
  const gpu = get(ML_KEYS.gpus);
  const gpus = intField(gpu.value, gpu.field, 0, 1);
  if (gpus) spec.gpus = gpus;
  const sm = get(ML_KEYS.gpuSmShare);
  const smShare = numField(sm.value, sm.field, 0, 1);
  if (smShare !== undefined) spec.gpuSmShare = smShare;
  return spec;
}

/**
 * Validates a deployment body as faas-cli sends it. Throws a validation error naming the first
 * bad field; unknown top-level fields are ignored, as OpenFaaS does.
 */
export function parseDeployment(body: unknown): FunctionSpec {
  if (!isObject(body)) throw invalid('body', 'must be a JSON object');
  const service = checkDnsLabel(body.service, 'service');
  const image = checkImageRef(body.image);
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
    image,
    namespace,
    envVars: envVars(body.envVars, 'envVars'),
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
