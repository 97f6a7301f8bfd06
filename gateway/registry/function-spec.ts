import { totalmem } from 'node:os';
import { invalid } from '../errors';
import { checkDnsLabel, DEFAULT_NAMESPACE } from '../lib/names';
import { cpuQuantityCores, memoryQuantityBytes } from '../lib/quantity';
import { ModelSource, parseModelSource } from './model-uri-spec';
import { checkTimeoutsAndRetries } from './timeouts-spec';

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
  /** `mlfaas.model.uri` + `mlfaas.model.sha256`: the model fetched by URI into the node's cache (model-uri-spec.ts). */
  modelSource?: ModelSource;
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

/** Upper bounds of the numeric ML fields (documented in docs/reference.md, "Function fields users set"). */
export const ML_BOUNDS = {
  /** `com.openfaas.scale.min` and `com.openfaas.scale.max`: replicas of one function. */
  scale: 1000,
  /** `mlfaas.batch.max`: requests in one dynamic batch. */
  batch: 4096,
  /** `mlfaas.max_inflight`: concurrent requests sent to one replica. */
  inflight: 65536,
} as const;

/**
 * Bounds of a deployment's other fields (documented in docs/gateway.md, "Deploy validation").
 * Lengths are UTF-8 bytes.
 */
export const DEPLOY_BOUNDS = {
  /** `limits.memory` and `requests.memory` floor, bytes (32Mi: a Node or Python runtime cannot start below it). */
  memoryMinBytes: 32 * 1024 ** 2,
  /** Their ceiling, bytes: the gateway host's memory (no replica can use more). */
  memoryMaxBytes: totalmem(),
  /** `limits.cpu` and `requests.cpu` floor, cores (1m: Kubernetes' resolution; "0" is not "unlimited"). */
  cpuMinCores: 0.001,
  /** Their ceiling, cores. */
  cpuMaxCores: 1024,
  /** Entries in `labels`, and in `annotations`. */
  mapEntries: 256,
  /** A label or annotation key (Kubernetes: a 253-byte prefix, `/`, a 63-byte name). */
  keyBytes: 317,
  /** A label value (Kubernetes allows 63; OpenFaaS labels carry longer values). */
  labelValueBytes: 4096,
  /** An annotation value. */
  annotationValueBytes: 64 * 1024,
  /** All annotations' keys and values together (Kubernetes' total). */
  annotationsTotalBytes: 256 * 1024,
  /** One `KEY=value` of `envVars`, bytes (Linux's MAX_ARG_STRLEN less the NUL: execve refuses more). */
  envEntryBytes: 128 * 1024 - 1,
  /** All of `envVars` together. */
  envTotalBytes: 1024 * 1024,
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

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
/** A key as messages show it: quoted, at most 40 characters. */
const shown = (k: string) => JSON.stringify(k.length > 40 ? `${k.slice(0, 37)}...` : k);

/**
 * Names a function may not set in its env: the platform's own variables (its socket, its token
 * daemon, the limiter it injects, the listen address and `HOME` it gives every replica), every
 * dynamic-loader variable (`LD_*`), the other variables glibc ignores for setuid programs because
 * they load code or write files (`GCONV_PATH`, `GETCONF_DIR`, `LOCPATH`, `NLSPATH`,
 * `MALLOC_TRACE`, `HOSTALIASES`), and the shell's start-up hooks (`BASH_ENV`, `SHELLOPTS`,
 * `BASHOPTS`, exported functions `BASH_FUNC_*`): a replica's environment passes through
 * privileged steps before the function's code runs. `PATH` is the function's own.
 */
const RESERVED_ENV: Array<{ re: RegExp; why: string }> = [
  { re: /^(MLFAAS_|TL_|CUDA_MPS_)|^(LD_PRELOAD|HOST|PORT|HOME)$/, why: 'is set by the platform and cannot be overridden' },
  {
    re: /^(LD_|BASH_FUNC_)|^(GCONV_PATH|GETCONF_DIR|LOCPATH|NLSPATH|MALLOC_TRACE|HOSTALIASES|BASH_ENV|SHELLOPTS|BASHOPTS)$/,
    why: 'is reserved: the dynamic loader or the shell acts on it before the function runs',
  },
];

/** `envVars`: names a process environment can hold (not empty, no `=` or NUL), values without NUL, none reserved, bounded. */
function envVars(v: unknown, field: string): Record<string, string> {
  const m = stringMap(v, field);
  let total = 0;
  for (const [k, val] of Object.entries(m)) {
    if (k === '' || /[=\0]/.test(k)) throw invalid(field, `${shown(k)} is not a variable name: it must be non-empty, without "=" or NUL`);
    const reserved = RESERVED_ENV.find((r) => r.re.test(k));
    if (reserved) throw invalid(`${field}.${k}`, reserved.why);
    if (val.includes('\0')) throw invalid(`${field}.${k}`, 'must not contain NUL (a process environment cannot hold it)');
    const n = bytes(k) + 1 + bytes(val);
    if (n > DEPLOY_BOUNDS.envEntryBytes)
      throw invalid(k.length > 256 ? field : `${field}.${k}`, `${shown(k)} is ${n} bytes as KEY=value; at most ${DEPLOY_BOUNDS.envEntryBytes}`);
    total += n + 1;
  }
  if (total > DEPLOY_BOUNDS.envTotalBytes) throw invalid(field, `${total} bytes in all; at most ${DEPLOY_BOUNDS.envTotalBytes}`);
  return m;
}

/**
 * `labels` or `annotations`: at most `mapEntries` entries, keys non-empty, without control
 * characters and at most `keyBytes`, values at most `valueBytes` (and `totalBytes` in all).
 */
function boundedMap(v: unknown, field: string, valueBytes: number, totalBytes = Infinity): Record<string, string> {
  const m = stringMap(v, field);
  const entries = Object.entries(m);
  if (entries.length > DEPLOY_BOUNDS.mapEntries) throw invalid(field, `has ${entries.length} entries; at most ${DEPLOY_BOUNDS.mapEntries}`);
  let total = 0;
  for (const [k, val] of entries) {
    if (k === '' || /[\x00-\x1f\x7f]/.test(k)) throw invalid(field, `key ${shown(k)} must be non-empty, without control characters`);
    if (bytes(k) > DEPLOY_BOUNDS.keyBytes) throw invalid(field, `key ${shown(k)} is ${bytes(k)} bytes; at most ${DEPLOY_BOUNDS.keyBytes}`);
    if (bytes(val) > valueBytes) throw invalid(`${field}.${k}`, `is ${bytes(val)} bytes; at most ${valueBytes}`);
    total += bytes(k) + bytes(val);
  }
  if (total > totalBytes) throw invalid(field, `keys and values are ${total} bytes in all; at most ${totalBytes}`);
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

const MiB = 1024 ** 2;
const mib = (b: number) => `${Math.floor(b / MiB)}Mi`;

/** `limits` or `requests`: memory and cpu only, each a quantity within `DEPLOY_BOUNDS`. */
function resources(v: unknown, field: string): ResourceList | undefined {
  if (v === undefined || v === null) return undefined;
  const m = stringMap(v, field);
  for (const k of Object.keys(m)) {
    if (k !== 'memory' && k !== 'cpu') throw invalid(`${field}.${k}`, 'unknown resource (memory or cpu)');
  }
  if (m.memory !== undefined) {
    const b = memoryQuantityBytes(m.memory);
    if (b === undefined) throw invalid(`${field}.memory`, `"${m.memory}" is not a quantity like 512Mi`);
    if (b < DEPLOY_BOUNDS.memoryMinBytes)
      throw invalid(`${field}.memory`, `"${m.memory}" is below the minimum ${mib(DEPLOY_BOUNDS.memoryMinBytes)} (no runtime starts in less)`);
    if (b > DEPLOY_BOUNDS.memoryMaxBytes)
      throw invalid(`${field}.memory`, `"${m.memory}" is above the maximum ${mib(DEPLOY_BOUNDS.memoryMaxBytes)} (the host's memory)`);
  }
  if (m.cpu !== undefined) {
    const c = cpuQuantityCores(m.cpu);
    if (c === undefined) throw invalid(`${field}.cpu`, `"${m.cpu}" is not a quantity like 500m or 1`);
    if (c < DEPLOY_BOUNDS.cpuMinCores) throw invalid(`${field}.cpu`, `"${m.cpu}" is below the minimum 1m (leave limits.cpu out for no limit)`);
    if (c > DEPLOY_BOUNDS.cpuMaxCores) throw invalid(`${field}.cpu`, `"${m.cpu}" is above the maximum ${DEPLOY_BOUNDS.cpuMaxCores} cores`);
  }
  return m;
}

/** A request above its limit cannot be granted (Kubernetes refuses it too): 400 naming the request. */
function requestsWithinLimits(requests: ResourceList | undefined, limits: ResourceList | undefined): void {
  if (!requests || !limits) return;
  if (requests.memory !== undefined && limits.memory !== undefined && memoryQuantityBytes(requests.memory)! > memoryQuantityBytes(limits.memory)!) {
    throw invalid('requests.memory', `"${requests.memory}" is above limits.memory "${limits.memory}"`);
  }
  if (requests.cpu !== undefined && limits.cpu !== undefined && cpuQuantityCores(requests.cpu)! > cpuQuantityCores(limits.cpu)!) {
    throw invalid('requests.cpu', `"${requests.cpu}" is above limits.cpu "${limits.cpu}"`);
  }
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
  const source = parseModelSource(get);
  if (source) spec.modelSource = source;
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
  const labels = boundedMap(body.labels, 'labels', DEPLOY_BOUNDS.labelValueBytes);
  const annotations = boundedMap(body.annotations, 'annotations', DEPLOY_BOUNDS.annotationValueBytes, DEPLOY_BOUNDS.annotationsTotalBytes);
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
  checkTimeoutsAndRetries(spec.envVars, annotations); // read/write/exec_timeout, com.openfaas.retry.* (issue 25)
  if (body.envProcess !== undefined) spec.envProcess = body.envProcess as string;
  const constraints = stringList(body.constraints, 'constraints');
  if (constraints) spec.constraints = constraints;
  if (secrets) spec.secrets = secrets;
  const limits = resources(body.limits, 'limits');
  if (limits) spec.limits = limits;
  const requests = resources(body.requests, 'requests');
  if (requests) spec.requests = requests;
  requestsWithinLimits(requests, limits);
  if (body.readOnlyRootFilesystem !== undefined) spec.readOnlyRootFilesystem = body.readOnlyRootFilesystem as boolean;
  return spec;
}
