import { Router } from 'express';
import { invalid, notFound } from '../errors';
import type { FunctionSpec } from '../registry/function-spec';
import { checkDnsLabel, DEFAULT_NAMESPACE, FunctionRef, refKey, splitQualified } from '../lib/names';
import type { FunctionProvider, FunctionStatus } from '../providers/function-provider';
import { parseDeployment, parseMlSpec } from '../registry/function-spec';
import { clearPin, manualHoldMs, pinReplicas } from '../registry/manual-scale';
import type { Registry } from '../registry/registry';
import { ScalingEvents } from '../registry/scaling-events';
import { Forecasts } from '../registry/forecasts';

/** `namespace` query parameter, validated, defaulting to openfaas-fn. */
export function namespaceOf(q: unknown, field = 'namespace'): string {
  if (q === undefined || q === '') return DEFAULT_NAMESPACE;
  return checkDnsLabel(q, field);
}

/** Body `{functionName, namespace?}` of DELETE /system/functions. */
function deleteRef(body: unknown): FunctionRef {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body', 'must be a JSON object');
  const b = body as Record<string, unknown>;
  return { name: checkDnsLabel(b.functionName, 'functionName'), namespace: namespaceOf(b.namespace) };
}

/** Body `{serviceName?, replicas, namespace?}` of POST /system/scale-function/{name}. */
function scaleBody(body: unknown): { replicas: number; namespace?: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body', 'must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.replicas !== 'number' || !Number.isInteger(b.replicas)) throw invalid('replicas', 'must be an integer');
  if (b.replicas < 0) throw invalid('replicas', `${b.replicas} must not be negative`);
  return { replicas: b.replicas, namespace: b.namespace === undefined ? undefined : namespaceOf(b.namespace) };
}

/**
 * A deployment's secrets must exist in its namespace (as faas-netes requires): a replica started
 * without one would run without it. 400 naming `secrets` and the first one missing.
 */
async function withExistingSecrets(provider: FunctionProvider, spec: FunctionSpec): Promise<FunctionSpec> {
  if (!spec.secrets?.length) return spec;
  const have = new Set((await provider.secrets.list(spec.namespace)).map((s) => s.name));
  const missing = spec.secrets.find((s) => !have.has(s));
  if (missing !== undefined) {
    throw invalid('secrets',
      `secret "${missing}" does not exist in namespace ${spec.namespace} (create it first: faas-cli secret ` +
      `create ${missing}${spec.namespace === DEFAULT_NAMESPACE ? '' : ` -n ${spec.namespace}`})`);
  }
  return spec;
}

/** Adds the gateway's invocation counts to provider statuses (OpenFaaS's gateway does the same). */
function withCounts(list: FunctionStatus[], counts: Record<string, number>) {
  return list.map((s) => ({ ...s, invocationCount: counts[refKey(s)] ?? 0 }));
}

/** `/system/functions`, `/system/function/{name}`, `/system/scale-function/{name}`. */
export function functionRoutes(provider: FunctionProvider, registry: Registry, events: ScalingEvents): Router {
  const r = Router();

  r.get('/system/functions', async (req, res) => {
    const ns = namespaceOf(req.query.namespace);
    res.json(withCounts(await provider.list(ns), await registry.invocationCounts()));
  });

  r.post('/system/functions', async (req, res) => {
    await provider.deploy(await withExistingSecrets(provider, parseDeployment(req.body)));
    res.status(202).end();
  });

  // faas-cli deploys with PUT first and falls back to POST on 404
  r.put('/system/functions', async (req, res) => {
    const spec = parseDeployment(req.body);
    // an unknown function is a 404 first (faas-cli then POSTs), as in faas-netes
    if (await provider.get({ name: spec.service, namespace: spec.namespace })) await withExistingSecrets(provider, spec);
    await provider.update(spec);
    res.status(202).end();
  });

  r.delete('/system/functions', async (req, res) => {
    const ref = deleteRef(req.body);
    await provider.remove(ref);
    await events.remove(ref);
    await new Forecasts(registry.redis).remove(ref); // the dashboard's forecast history (issue 26)
    await clearPin(registry.redis, ref);
    res.status(202).end();
  });

  r.get('/system/function/:name', async (req, res) => {
    const ref = { name: checkDnsLabel(req.params.name, 'name'), namespace: namespaceOf(req.query.namespace) };
    const s = await provider.get(ref);
    if (!s) throw notFound(`No such function: ${ref.name}`);
    const [withCount] = withCounts([s], await registry.invocationCounts());
    const [last] = await events.list(ref, 1);
    // what the platform enforces on its replicas (and the fallback, where there is one), as /system/info says
    withCount.annotations = { ...withCount.annotations, 'mlfaas.enforcement': provider.enforcement().summary };
    if (last) withCount.annotations = { ...withCount.annotations, 'mlfaas.autoscaler.last-decision': ScalingEvents.summary(last) };
    res.json(withCount);
  });

  /** `?function=NAME[.NAMESPACE][&namespace=NS]` naming a deployed function (400 / 404 otherwise). */
  const existingFunction = async (q: Record<string, unknown>): Promise<FunctionRef> => {
    if (typeof q.function !== 'string' || q.function === '') throw invalid('function', 'the function name is required (?function=NAME[.NAMESPACE])');
    const ref = splitQualified(q.function, namespaceOf(q.namespace));
    checkDnsLabel(ref.name, 'function');
    checkDnsLabel(ref.namespace, 'namespace');
    if (!(await provider.get(ref))) throw notFound(`No such function: ${ref.name}`);
    return ref;
  };

  r.get('/system/capability', async (req, res) => {
    const ref = await existingFunction(req.query as Record<string, unknown>);
    const p = await provider.capability?.(ref);
    if (!p) throw notFound(`no capability profile for ${ref.name} yet (measured when its first replica is ready)`);
    res.json(p);
  });

  r.get('/system/scaling-events', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const ref = await existingFunction(q);
    let limit = 100;
    if (q.limit !== undefined) {
      limit = Number(q.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalid('limit', `"${q.limit}" must be an integer in [1, 1000]`);
    }
    res.json(await events.list(ref, limit));
  });

  r.post('/system/scale-function/:name', async (req, res) => {
    const name = checkDnsLabel(req.params.name, 'name');
    const b = scaleBody(req.body);
    const ref = { name, namespace: b.namespace ?? namespaceOf(req.query.namespace) };
    const s = await provider.get(ref);
    if (!s) throw notFound(`No such function: ${name}`);
    if (s.kind === 'training') {
      throw invalid('name',
        `${name} is a training function: the job scheduler sets its workers per job (submit jobs to POST /system/jobs), not a replica count`);
    }
    const ml = parseMlSpec(s.labels, s.annotations);
    const floor = ml.scaleToZero ? 0 : ml.minScale;
    if (b.replicas > ml.maxScale) throw invalid('replicas', `${b.replicas} exceeds max_scale ${ml.maxScale}`);
    if (b.replicas < floor) throw invalid('replicas', `${b.replicas} is below min_scale ${floor}`);
    await provider.scale(ref, b.replicas);
    // the autoscaler keeps this count for the hold window (manual-scale.ts), and says so
    const pin = await pinReplicas(registry.redis, ref, b.replicas, manualHoldMs(s.labels, s.annotations));
    const held = pin ? `held until ${new Date(pin.until).toISOString()}` : 'not held (hold window 0)';
    await events.record(ref,
      { time: new Date().toISOString(), policy: 'manual', action: 'replicas', from: s.replicas, to: b.replicas,
        reason: `manual scale to ${b.replicas} by API, ${held}` });
    res.status(202).end();
  });

  return r;
}
