import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { FunctionDeployment } from '../gateway/registry/function-spec';

/** One function of a stack.yml, as faas-cli reads it. */
export interface StackFunction {
  name: string;
  lang?: string;
  /** Absolute handler directory. */
  handler?: string;
  image: string;
  fprocess?: string;
  namespace?: string;
  environment: Record<string, string>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  secrets?: string[];
  constraints?: string[];
  limits?: { memory?: string; cpu?: string };
  requests?: { memory?: string; cpu?: string };
  readonlyRootFilesystem?: boolean;
}

export interface Stack {
  file: string;
  gateway?: string;
  functions: StackFunction[];
}

const strMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries((v ?? {}) as Record<string, unknown>).map(([k, x]) => [k, String(x)]));

/** Reads a stack.yml (and its `environment_file`s) the way faas-cli does. */
export function readStack(file: string): Stack {
  const abs = resolve(file);
  const dir = dirname(abs);
  const doc = parse(readFileSync(abs, 'utf8')) as { provider?: { gateway?: string }; functions?: Record<string, Record<string, unknown>> };
  if (!doc || typeof doc.functions !== 'object') throw new Error(`${file}: no functions section`);
  const functions = Object.entries(doc.functions).map(([name, f]) => {
    if (typeof f.image !== 'string') throw new Error(`${file}: functions.${name}.image is required`);
    const environment: Record<string, string> = {};
    for (const ef of (f.environment_file as string[] | undefined) ?? []) {
      const e = parse(readFileSync(resolve(dir, ef), 'utf8')) as { environment?: unknown };
      Object.assign(environment, strMap(e?.environment));
    }
    Object.assign(environment, strMap(f.environment));
    const sf: StackFunction = {
      name,
      image: f.image,
      environment,
      labels: strMap(f.labels),
      annotations: strMap(f.annotations),
    };
    if (typeof f.lang === 'string') sf.lang = f.lang;
    if (typeof f.handler === 'string') sf.handler = resolve(dir, f.handler);
    if (typeof f.fprocess === 'string') sf.fprocess = f.fprocess;
    if (typeof f.namespace === 'string') sf.namespace = f.namespace;
    if (Array.isArray(f.secrets)) sf.secrets = f.secrets.map(String);
    if (Array.isArray(f.constraints)) sf.constraints = f.constraints.map(String);
    if (f.limits) sf.limits = strMap(f.limits);
    if (f.requests) sf.requests = strMap(f.requests);
    if (typeof f.readonly_root_filesystem === 'boolean') sf.readonlyRootFilesystem = f.readonly_root_filesystem;
    return sf;
  });
  return { file: abs, gateway: doc.provider?.gateway, functions };
}

/**
 * The body faas-cli would send for this function. Like faas-cli, the function's `fprocess`, else
 * its template's (`templateFprocess`), becomes `envProcess`, which `faas-cli describe` shows as
 * "Function Process".
 */
export function toDeployment(f: StackFunction, templateFprocess?: string): FunctionDeployment {
  const d: FunctionDeployment = { service: f.name, image: f.image, labels: f.labels, annotations: f.annotations };
  if (f.namespace) d.namespace = f.namespace;
  const fprocess = f.fprocess ?? templateFprocess;
  if (fprocess) d.envProcess = fprocess;
  if (Object.keys(f.environment).length) d.envVars = f.environment;
  if (f.constraints) d.constraints = f.constraints;
  if (f.secrets) d.secrets = f.secrets;
  if (f.limits) d.limits = f.limits;
  if (f.requests) d.requests = f.requests;
  if (f.readonlyRootFilesystem !== undefined) d.readOnlyRootFilesystem = f.readonlyRootFilesystem;
  return d;
}
