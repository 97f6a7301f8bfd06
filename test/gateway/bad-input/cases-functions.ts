/** `/system/functions` (POST, PUT, DELETE, GET), `/system/function/{name}`, `/system/scale-function/{name}`. */
import { ML_BOUNDS } from '../../../gateway/registry/function-spec';
import { aFunction } from '../../helpers/fixtures';
import { BAD_LABELS, Case, describeValue, invalid, notFound, NOT_STRINGS } from './case';

const good = aFunction('good').minScale(0).build();
const body = (over: Record<string, unknown>) => ({ ...good, ...over });
const deploy = (name: string, b: unknown, want: Omit<Case, 'name' | 'method' | 'path'>, method = 'POST'): Case => ({
  name: `${method === 'POST' ? 'deploy' : 'update'}: ${name}`,
  method,
  path: '/system/functions',
  body: b,
  ...want,
});

/** Integer ML fields, their bounds, and values that are never valid for any of them. */
const INTEGER_KEYS: Array<{ key: string; min: number; max: number }> = [
  { key: 'com.openfaas.scale.min', min: 0, max: ML_BOUNDS.scale },
  { key: 'com.openfaas.scale.max', min: 1, max: ML_BOUNDS.scale },
  { key: 'mlfaas.batch.max', min: 1, max: ML_BOUNDS.batch },
  { key: 'mlfaas.max_inflight', min: 1, max: ML_BOUNDS.inflight },
];
const NOT_INTEGERS = ['2.5', 'abc', '', ' ', '1e3', '0x10', 'Infinity', 'NaN', '+5', '-0.5', '1 2', '100000000000000000000'];

function integerFieldCases(): Case[] {
  const out: Case[] = [];
  for (const { key, min, max } of INTEGER_KEYS) {
    const bad = [...NOT_INTEGERS, String(min - 1), String(max + 1), String(max * 1000)];
    for (const v of bad) {
      // labels on deploy, annotations on update: both are read, annotations win
      out.push(deploy(`label ${key}=${describeValue(v)}`, body({ labels: { [key]: v } }), invalid(`labels.${key}`)));
      out.push(deploy(`annotation ${key}=${describeValue(v)}`, body({ service: 'exists', annotations: { [key]: v } }), invalid(`annotations.${key}`), 'PUT'));
    }
  }
  return out;
}

const NUMBER_FIELDS: Array<{ key: string; bad: string[] }> = [
  { key: 'mlfaas.slo.latency_ms', bad: ['abc', '', ' ', '-5', '0', 'Infinity', 'NaN', '1e400', '3600001'] },
  { key: 'mlfaas.slo.percentile', bad: ['abc', '', '-5', '0', 'Infinity', 'NaN', '100.5', '1e3'] },
  { key: 'com.openfaas.scale.zero', bad: ['maybe', 'TRUE', '1', 'yes', '', ' true'] },
  { key: 'mlfaas.model', bad: ['/etc/passwd', '../../../../etc/passwd', 'models/../../x', '..', ''] },
  { key: 'mlfaas.dataset', bad: ['/etc/passwd', '../../../../../etc/hostname', 'data/../../x', '..', ''] },
];

const BAD_IMAGES: unknown[] = ['.', '..', './x', '../x', 'x/..', 'x/../..', '/etc', '/abs/img:1', 'a//b', 'x/', '..:1', 'a b', 'a\\b', 'x\n', ' ', '',
  'x'.repeat(256), null, ...NOT_STRINGS];

/** Each top-level field with values of the wrong type or shape, and the field the error names. */
const FIELD_CASES: Array<{ field: string; values: unknown[]; names?: (v: unknown) => string }> = [
  { field: 'service', values: [null, '', ...NOT_STRINGS, ...BAD_LABELS] },
  { field: 'namespace', values: [null, ...NOT_STRINGS, ...BAD_LABELS] },
  { field: 'envProcess', values: [null, ...NOT_STRINGS] },
  { field: 'readOnlyRootFilesystem', values: ['yes', 'true', 1, 0, null, [], {}] },
  { field: 'envVars', values: [7, 'x', true, [], ['x']] },
  { field: 'labels', values: [7, 'x', true, [], ['x']] },
  { field: 'annotations', values: [7, 'x', true, [], ['x']] },
  { field: 'secrets', values: ['x', 7, true, {}] },
  { field: 'constraints', values: ['x', 7, true, {}] },
  { field: 'limits', values: [7, 'x', true, [], ['1']] },
  { field: 'requests', values: [7, 'x', true, []] },
];

/** Nested fields: the value given and the JSON path the error names. */
const NESTED: Array<{ over: Record<string, unknown>; field: string }> = [
  ...[1, null, true, {}, []].map((v) => ({ over: { envVars: { A: v } }, field: 'envVars.A' })),
  ...[1, null, {}].map((v) => ({ over: { labels: { k: v } }, field: 'labels.k' })),
  ...[1, false].map((v) => ({ over: { annotations: { k: v } }, field: 'annotations.k' })),
  { over: { secrets: [1] }, field: 'secrets[0]' },
  { over: { secrets: [null] }, field: 'secrets[0]' },
  { over: { secrets: ['Bad_Name'] }, field: 'secrets[0]' },
  { over: { secrets: ['ok', 5] }, field: 'secrets[1]' },
  { over: { secrets: ['../x'] }, field: 'secrets[0]' },
  { over: { constraints: [1] }, field: 'constraints[0]' },
  { over: { constraints: ['a', {}] }, field: 'constraints[1]' },
  ...['lots', '-1Mi', '1Qi', '', '1e9'].map((v) => ({ over: { limits: { memory: v } }, field: 'limits.memory' })),
  { over: { limits: { memory: 5 } }, field: 'limits.memory' },
  ...['fast', '-1', '1.5.2'].map((v) => ({ over: { limits: { cpu: v } }, field: 'limits.cpu' })),
  { over: { limits: { gpu: '1' } }, field: 'limits.gpu' },
  { over: { requests: { memory: 'lots' } }, field: 'requests.memory' },
  { over: { requests: { cpu: 'x' } }, field: 'requests.cpu' },
  { over: { requests: { gpu: '1' } }, field: 'requests.gpu' },
  { over: { labels: { 'com.openfaas.scale.min': '5', 'com.openfaas.scale.max': '2' } }, field: 'labels.com.openfaas.scale.min' },
  { over: { labels: { 'com.openfaas.scale.min': '1000' }, annotations: { 'com.openfaas.scale.max': '999' } }, field: 'labels.com.openfaas.scale.min' },
];

const MALFORMED_JSON = ['{"service": ', '{', '{"a":1,}', "{'a':1}", 'nul', '[1,', '"unterminated', '{"a":1}}', '{"a":01}', 'service=x&image=y'];
const NOT_OBJECTS: unknown[] = [[], [good], 'str', 5, true, null];

export function functionCases(): Case[] {
  const cases: Case[] = [
    ...integerFieldCases(),
    ...NUMBER_FIELDS.flatMap(({ key, bad }) =>
      bad.map((v) => deploy(`annotation ${key}=${describeValue(v)}`, body({ annotations: { [key]: v } }), invalid(`annotations.${key}`))),
    ),
    ...BAD_IMAGES.map((v) => deploy(`image ${describeValue(v)}`, body({ image: v }), invalid('image'))),
    ...['.', '..', '/etc', 'x/..'].map((v) => deploy(`image ${describeValue(v)}`, body({ service: 'exists', image: v }), invalid('image'), 'PUT')),
    deploy('image not built', body({ image: 'nowhere/x:1' }), { status: 400, code: 'image_not_found', field: 'image' }),
    deploy('image missing', { service: 'x' }, invalid('image')),
    ...FIELD_CASES.flatMap(({ field, values }) => values.map((v) => deploy(`${field} ${describeValue(v)}`, body({ [field]: v }), invalid(field)))),
    ...FIELD_CASES.filter((f) => f.field !== 'service').map(({ field, values }) =>
      deploy(`${field} ${describeValue(values[0])}`, body({ service: 'exists', [field]: values[0] }), invalid(field), 'PUT'),
    ),
    ...NESTED.map(({ over, field }) => deploy(`${field} = ${describeValue(Object.values(over)[0])}`, body(over), invalid(field))),
    ...MALFORMED_JSON.map((raw) => deploy(`malformed JSON ${describeValue(raw)}`, undefined, { raw, status: 400, code: 'malformed_json', field: 'body' })),
    ...MALFORMED_JSON.slice(0, 3)
      .map((raw) => deploy(`malformed JSON ${describeValue(raw)}`, undefined, { raw, status: 400, code: 'malformed_json', field: 'body' }, 'PUT')),
    ...NOT_OBJECTS.map((b) => deploy(`body ${describeValue(b)}`, b, invalid('body'))),
    ...NOT_OBJECTS.slice(0, 3).map((b) => deploy(`body ${describeValue(b)}`, b, invalid('body'), 'PUT')),
    deploy('empty body', undefined, { raw: '', ...invalid('service') }),
    deploy('missing service', { image: 'test/echo-http:1' }, invalid('service')),
    deploy('already exists', body({ service: 'exists' }), { status: 409, code: 'conflict', field: 'service' }),
    deploy('unknown function', body({ service: 'ghost' }), notFound, 'PUT'),
    deploy('unknown function in another namespace', body({ service: 'exists', namespace: 'nope' }), notFound, 'PUT'),
  ];

  // DELETE /system/functions {functionName, namespace?}
  const del = (name: string, b: unknown, want: Omit<Case, 'name' | 'method' | 'path'>): Case =>
    ({ name: `remove: ${name}`, method: 'DELETE', path: '/system/functions', body: b, ...want });
  cases.push(
    del('no functionName', {}, invalid('functionName')),
    ...[null, '', ...NOT_STRINGS, ...BAD_LABELS].map((v) => del(`functionName ${describeValue(v)}`, { functionName: v }, invalid('functionName'))),
    ...['DEV', 'a_b', 5, []].map((v) => del(`namespace ${describeValue(v)}`, { functionName: 'exists', namespace: v }, invalid('namespace'))),
    ...NOT_OBJECTS.map((b) => del(`body ${describeValue(b)}`, b, invalid('body'))),
    ...MALFORMED_JSON.slice(0, 3)
      .map((raw) => del(`malformed JSON ${describeValue(raw)}`, undefined, { raw, status: 400, code: 'malformed_json', field: 'body' })),
    del('unknown', { functionName: 'ghost' }, notFound),
    del('known name, other namespace', { functionName: 'exists', namespace: 'nope' }, notFound),
  );

  // GET /system/functions?namespace=
  const list = (q: string, want: Omit<Case, 'name' | 'method' | 'path'>): Case =>
    ({ name: `list: ?${q}`, method: 'GET', path: `/system/functions?${q}`, ...want });
  cases.push(
    ...BAD_LABELS.map((v) => list(`namespace=${encodeURIComponent(v)}`, invalid('namespace'))),
    list('namespace[]=a', invalid('namespace')),
    list('namespace[x]=y', invalid('namespace')),
    list('namespace=a&namespace=b', invalid('namespace')),
    list('namespace=nope', { status: 200 }),
    list('namespace=', { status: 200 }),
  );

  // GET /system/function/{name}
  const get = (seg: string, want: Omit<Case, 'name' | 'method' | 'path'>): Case =>
    ({ name: `get: /system/function/${seg}`, method: 'GET', path: `/system/function/${seg}`, ...want });
  cases.push(
    ...BAD_LABELS.map((v) => get(encodeURIComponent(v), invalid('name'))),
    get('%zz', invalid('name')),
    get('%E0%A4%A', invalid('name')),
    get('a%2Fb', invalid('name')),
    get('exists?namespace=DEV', invalid('namespace')),
    get('exists?namespace[]=x', invalid('namespace')),
    get('ghost', notFound),
    get('exists?namespace=nope', notFound),
    get('exists', { status: 200 }),
  );

  // POST /system/scale-function/{name} {replicas, namespace?}
  const scale = (name: string, seg: string, b: unknown, want: Omit<Case, 'name' | 'method' | 'path'>, raw?: string): Case => ({
    name: `scale: ${name}`,
    method: 'POST',
    path: `/system/scale-function/${seg}`,
    body: b,
    ...(raw !== undefined ? { raw } : {}),
    ...want,
  });
  cases.push(
    ...[-1, 1.5, '2', null, true, [], {}, 1e20, -1e20, 4, 99].map((v) => scale(`replicas ${describeValue(v)}`, 'exists', { replicas: v }, invalid('replicas'))),
    scale('replicas missing', 'exists', {}, invalid('replicas')),
    ...NOT_OBJECTS.map((b) => scale(`body ${describeValue(b)}`, 'exists', b, invalid('body'))),
    scale('malformed JSON', 'exists', undefined, { status: 400, code: 'malformed_json', field: 'body' }, '{"replicas":'),
    ...BAD_LABELS.map((v) => scale(`name ${describeValue(v)}`, encodeURIComponent(v), { replicas: 1 }, invalid('name'))),
    scale('name %zz', '%zz', { replicas: 1 }, invalid('name')),
    scale('namespace in body', 'exists', { replicas: 1, namespace: 'DEV' }, invalid('namespace')),
    scale('namespace in query', 'exists?namespace=DEV', { replicas: 1 }, invalid('namespace')),
    scale('unknown function', 'ghost', { replicas: 1 }, notFound),
    scale('unknown namespace', 'exists?namespace=nope', { replicas: 1 }, notFound),
    scale('to zero (allowed: min 0)', 'exists', { replicas: 0 }, { status: 202 }),
  );
  return cases;
}
