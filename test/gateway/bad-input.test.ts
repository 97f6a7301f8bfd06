/** Every endpoint, fed bad input: a clear 4xx with a JSON body naming the field; never a 500. */
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { testGateway, testRedis, TestPlatform } from '../helpers/platform';

interface Case {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  raw?: string;
  status: number;
  code: string;
  field?: string;
}

const good = aFunction('good').minScale(0).build();
const withLabel = (k: string, v: string) => ({ ...good, labels: { [k]: v } });
const withAnno = (k: string, v: string) => ({ ...good, annotations: { [k]: v } });

const CASES: Case[] = [
  { name: 'deploy: malformed JSON', method: 'POST', path: '/system/functions', raw: '{"service": ', status: 400, code: 'malformed_json', field: 'body' },
  { name: 'deploy: array body', method: 'POST', path: '/system/functions', body: [good], status: 400, code: 'validation_failed', field: 'body' },
  { name: 'deploy: missing service', method: 'POST', path: '/system/functions', body: { image: 'test/echo-http:1' }, status: 400, code: 'validation_failed', field: 'service' },
  { name: 'deploy: invalid name', method: 'POST', path: '/system/functions', body: { ...good, service: 'Bad_Name' }, status: 400, code: 'validation_failed', field: 'service' },
  { name: 'deploy: name too long', method: 'POST', path: '/system/functions', body: { ...good, service: 'a'.repeat(64) }, status: 400, code: 'validation_failed', field: 'service' },
  { name: 'deploy: missing image', method: 'POST', path: '/system/functions', body: { service: 'x' }, status: 400, code: 'validation_failed', field: 'image' },
  { name: 'deploy: image not built', method: 'POST', path: '/system/functions', body: { ...good, image: 'nowhere/x:1' }, status: 400, code: 'image_not_found', field: 'image' },
  { name: 'deploy: invalid namespace', method: 'POST', path: '/system/functions', body: { ...good, namespace: 'DEV' }, status: 400, code: 'validation_failed', field: 'namespace' },
  { name: 'deploy: env var not a string', method: 'POST', path: '/system/functions', body: { ...good, envVars: { A: 1 } }, status: 400, code: 'validation_failed', field: 'envVars.A' },
  { name: 'deploy: envProcess not a string', method: 'POST', path: '/system/functions', body: { ...good, envProcess: ['node'] }, status: 400, code: 'validation_failed', field: 'envProcess' },
  { name: 'deploy: secrets not strings', method: 'POST', path: '/system/functions', body: { ...good, secrets: [1] }, status: 400, code: 'validation_failed', field: 'secrets[0]' },
  { name: 'deploy: constraints not an array', method: 'POST', path: '/system/functions', body: { ...good, constraints: 'x' }, status: 400, code: 'validation_failed', field: 'constraints' },
  { name: 'deploy: bad memory quantity', method: 'POST', path: '/system/functions', body: { ...good, limits: { memory: 'lots' } }, status: 400, code: 'validation_failed', field: 'limits.memory' },
  { name: 'deploy: unknown resource', method: 'POST', path: '/system/functions', body: { ...good, requests: { gpu: '1' } }, status: 400, code: 'validation_failed', field: 'requests.gpu' },
  { name: 'deploy: readOnlyRootFilesystem not boolean', method: 'POST', path: '/system/functions', body: { ...good, readOnlyRootFilesystem: 'yes' }, status: 400, code: 'validation_failed', field: 'readOnlyRootFilesystem' },
  { name: 'deploy: negative min_scale', method: 'POST', path: '/system/functions', body: withLabel('com.openfaas.scale.min', '-1'), status: 400, code: 'validation_failed', field: 'labels.com.openfaas.scale.min' },
  { name: 'deploy: non-integer max_scale', method: 'POST', path: '/system/functions', body: withLabel('com.openfaas.scale.max', '2.5'), status: 400, code: 'validation_failed', field: 'labels.com.openfaas.scale.max' },
  { name: 'deploy: min above max', method: 'POST', path: '/system/functions', body: { ...good, labels: { 'com.openfaas.scale.min': '5', 'com.openfaas.scale.max': '2' } }, status: 400, code: 'validation_failed', field: 'labels.com.openfaas.scale.min' },
  { name: 'deploy: scale.zero not boolean', method: 'POST', path: '/system/functions', body: withLabel('com.openfaas.scale.zero', 'maybe'), status: 400, code: 'validation_failed', field: 'labels.com.openfaas.scale.zero' },
  { name: 'deploy: negative SLO', method: 'POST', path: '/system/functions', body: withAnno('mlfaas.slo.latency_ms', '-5'), status: 400, code: 'validation_failed', field: 'annotations.mlfaas.slo.latency_ms' },
  { name: 'deploy: SLO percentile over 100', method: 'POST', path: '/system/functions', body: withAnno('mlfaas.slo.percentile', '150'), status: 400, code: 'validation_failed', field: 'annotations.mlfaas.slo.percentile' },
  { name: 'deploy: max batch 0', method: 'POST', path: '/system/functions', body: withAnno('mlfaas.batch.max', '0'), status: 400, code: 'validation_failed', field: 'annotations.mlfaas.batch.max' },
  { name: 'deploy: labels not an object', method: 'POST', path: '/system/functions', body: { ...good, labels: 'x' }, status: 400, code: 'validation_failed', field: 'labels' },
  { name: 'update: invalid body', method: 'PUT', path: '/system/functions', body: { service: 'x', image: 7 }, status: 400, code: 'validation_failed', field: 'image' },
  { name: 'update: unknown function', method: 'PUT', path: '/system/functions', body: { ...good, service: 'ghost' }, status: 404, code: 'not_found' },
  { name: 'deploy: already exists', method: 'POST', path: '/system/functions', body: { ...good, service: 'exists' }, status: 409, code: 'conflict', field: 'service' },
  { name: 'remove: no functionName', method: 'DELETE', path: '/system/functions', body: {}, status: 400, code: 'validation_failed', field: 'functionName' },
  { name: 'remove: functionName a number', method: 'DELETE', path: '/system/functions', body: { functionName: 5 }, status: 400, code: 'validation_failed', field: 'functionName' },
  { name: 'remove: unknown', method: 'DELETE', path: '/system/functions', body: { functionName: 'ghost' }, status: 404, code: 'not_found' },
  { name: 'get: invalid name', method: 'GET', path: '/system/function/Bad_Name', status: 400, code: 'validation_failed', field: 'name' },
  { name: 'get: unknown', method: 'GET', path: '/system/function/ghost', status: 404, code: 'not_found' },
  { name: 'list: invalid namespace', method: 'GET', path: '/system/functions?namespace=A_B', status: 400, code: 'validation_failed', field: 'namespace' },
  { name: 'scale: negative', method: 'POST', path: '/system/scale-function/exists', body: { replicas: -1 }, status: 400, code: 'validation_failed', field: 'replicas' },
  { name: 'scale: fractional', method: 'POST', path: '/system/scale-function/exists', body: { replicas: 1.5 }, status: 400, code: 'validation_failed', field: 'replicas' },
  { name: 'scale: string', method: 'POST', path: '/system/scale-function/exists', body: { replicas: '2' }, status: 400, code: 'validation_failed', field: 'replicas' },
  { name: 'scale: missing', method: 'POST', path: '/system/scale-function/exists', body: {}, status: 400, code: 'validation_failed', field: 'replicas' },
  { name: 'scale: above max_scale', method: 'POST', path: '/system/scale-function/exists', body: { replicas: 99 }, status: 400, code: 'validation_failed', field: 'replicas' },
  { name: 'scale: unknown function', method: 'POST', path: '/system/scale-function/ghost', body: { replicas: 1 }, status: 404, code: 'not_found' },
  { name: 'secret: missing name', method: 'POST', path: '/system/secrets', body: { value: 'v' }, status: 400, code: 'validation_failed', field: 'name' },
  { name: 'secret: missing value', method: 'POST', path: '/system/secrets', body: { name: 'k' }, status: 400, code: 'validation_failed', field: 'value' },
  { name: 'secret: rawValue not base64', method: 'POST', path: '/system/secrets', body: { name: 'k', rawValue: '%%%' }, status: 400, code: 'validation_failed', field: 'rawValue' },
  { name: 'secret: update unknown', method: 'PUT', path: '/system/secrets', body: { name: 'ghost', value: 'v' }, status: 404, code: 'not_found' },
  { name: 'secret: remove unknown', method: 'DELETE', path: '/system/secrets', body: { name: 'ghost' }, status: 404, code: 'not_found' },
  { name: 'logs: no name', method: 'GET', path: '/system/logs', status: 400, code: 'validation_failed', field: 'name' },
  { name: 'logs: tail not a number', method: 'GET', path: '/system/logs?name=exists&tail=abc', status: 400, code: 'validation_failed', field: 'tail' },
  { name: 'logs: follow not boolean', method: 'GET', path: '/system/logs?name=exists&follow=maybe', status: 400, code: 'validation_failed', field: 'follow' },
  { name: 'logs: since not a time', method: 'GET', path: '/system/logs?name=exists&since=yesterday', status: 400, code: 'validation_failed', field: 'since' },
  { name: 'logs: unknown function', method: 'GET', path: '/system/logs?name=ghost', status: 404, code: 'not_found' },
  { name: 'namespace: invalid', method: 'GET', path: '/system/namespace/A_B', status: 400, code: 'validation_failed', field: 'namespace' },
  { name: 'namespace: unknown', method: 'GET', path: '/system/namespace/nope', status: 404, code: 'not_found' },
  { name: 'namespace: create unsupported', method: 'POST', path: '/system/namespace/x', body: {}, status: 501, code: 'not_implemented' },
  { name: 'invoke: invalid name', method: 'POST', path: '/function/Bad_Name', raw: 'x', status: 400, code: 'validation_failed', field: 'name' },
  { name: 'invoke: malformed percent-encoding', method: 'POST', path: '/function/%E0', raw: 'x', status: 400, code: 'validation_failed', field: 'name' },
  { name: 'invoke: unknown', method: 'POST', path: '/function/ghost', raw: 'x', status: 404, code: 'function_not_found' },
  { name: 'invoke: body too large', method: 'POST', path: '/function/exists', raw: 'x'.repeat(5000), status: 413, code: 'payload_too_large', field: 'body' },
  { name: 'async: unknown', method: 'POST', path: '/async-function/ghost', raw: 'x', status: 404, code: 'function_not_found' },
  { name: 'async: invalid namespace', method: 'POST', path: '/async-function/f.BAD', raw: 'x', status: 400, code: 'validation_failed', field: 'namespace' },
  { name: 'async: body too large', method: 'POST', path: '/async-function/exists', raw: 'x'.repeat(5000), status: 413, code: 'payload_too_large', field: 'body' },
  { name: 'system: body too large', method: 'POST', path: '/system/functions', raw: JSON.stringify({ ...good, envVars: { A: 'x'.repeat(5000) } }), status: 413, code: 'payload_too_large', field: 'body' },
  { name: 'scaling events: no function', method: 'GET', path: '/system/scaling-events', status: 400, code: 'validation_failed', field: 'function' },
  { name: 'scaling events: bad limit', method: 'GET', path: '/system/scaling-events?function=exists&limit=0', status: 400, code: 'validation_failed', field: 'limit' },
  { name: 'scaling events: unknown function', method: 'GET', path: '/system/scaling-events?function=ghost', status: 404, code: 'not_found' },
  { name: 'capability: no function', method: 'GET', path: '/system/capability', status: 400, code: 'validation_failed', field: 'function' },
  { name: 'capability: not profiled', method: 'GET', path: '/system/capability?function=exists', status: 404, code: 'not_found' },
  { name: 'unknown route', method: 'GET', path: '/system/nothing-here', status: 404, code: 'not_found' },
];

describe('bad input on every endpoint', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_MAX_BODY_BYTES: '4096' });
    seedEchoHttp(p.images);
    const res = await p.json('POST', '/system/functions', aFunction('exists').minScale(0).maxScale(3).build());
    expect(res.status).toBe(202);
  });
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  test.each(CASES)('$name → $status $code', async (c) => {
    const body = c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
    const res = await p.get(c.path, { method: c.method, body, headers: { 'content-type': 'application/json' } });
    const text = await res.text();
    expect({ status: res.status, text }).toEqual({ status: c.status, text: expect.any(String) });
    const err = (JSON.parse(text) as { error: { code: string; message: string; field?: string } }).error;
    expect(err.code).toBe(c.code);
    expect(err.message.length).toBeGreaterThan(5);
    if (c.field) expect(err.field).toBe(c.field);
  });

  it('lost nothing already accepted: the function deployed before is intact', async () => {
    const f = (await (await p.get('/system/function/exists')).json()) as { name: string; labels: Record<string, string> };
    expect(f.name).toBe('exists');
    expect(f.labels['com.openfaas.scale.max']).toBe('3');
  });
});
