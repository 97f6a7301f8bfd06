/**
 * `/system/logs`, `/system/capability`, `/system/scaling-events`, `/system/jobs*`,
 * `/system/secrets`, `/system/namespace(s)`, `/system/info`, `/healthz`, `/metrics`, unknown routes.
 */
import { BAD_LABELS, Case, describeValue, invalid, jobFnNotFound, notFound, NOT_STRINGS } from './case';

const q = (v: string) => encodeURIComponent(v);
const get = (path: string, want: Omit<Case, 'name' | 'method' | 'path'>, name = path): Case => ({ name: `GET ${name}`, method: 'GET', path, ...want });

function logCases(): Case[] {
  const logs = (query: string, want: Omit<Case, 'name' | 'method' | 'path'>) => get(`/system/logs?${query}`, want);
  return [
    logs('', invalid('name')),
    ...BAD_LABELS.map((v) => logs(`name=${q(v)}`, invalid('name'))),
    logs('name[]=exists', invalid('name')),
    ...['DEV', 'a_b'].map((v) => logs(`name=exists&namespace=${v}`, invalid('namespace'))),
    ...['abc', '-2', '-5', '1.5', '1e3', ' ', '0x10', 'Infinity', '+5', '--1'].map((v) => logs(`name=exists&tail=${q(v)}`, invalid('tail'))),
    logs('name=exists&tail[]=1', invalid('tail')),
    ...[
      'yesterday',
      '1969-12-31T23:59:59Z',
      '0001-01-01T00:00:00Z',
      '1900-01-01T00:00:00+01:00',
      '2024-13-45T99:99:99Z',
      '2024-02-31T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '1e13',
      '-5',
      '1700000000',
      '2024-01-01',
      '2024-01-01T10:00:00',
    ].map((v) => logs(`name=exists&since=${q(v)}`, invalid('since'))),
    ...['maybe', '1', 'TRUE', 'yes'].map((v) => logs(`name=exists&follow=${v}`, invalid('follow'))),
    logs('name=ghost', notFound),
    logs('name=exists&namespace=nope', notFound),
    logs('name=exists&tail=-1', { status: 200 }), // faas-cli's "all lines"
    logs(`name=exists&tail=5&since=${q('2024-01-01T00:00:00Z')}&follow=false`, { status: 200 }),
  ];
}

/** `?function=NAME[.NS]` on capability and scaling-events. */
function functionQueryCases(path: string): Case[] {
  const at = (query: string, want: Omit<Case, 'name' | 'method' | 'path'>) => get(`${path}?${query}`, want);
  return [
    at('', invalid('function')),
    at('function=', invalid('function')),
    at('function[]=exists', invalid('function')),
    ...BAD_LABELS.filter((v) => !v.includes('.')).map((v) => at(`function=${q(v)}`, invalid('function'))),
    at('function=.exists', invalid('function')),
    at('function=exists.DEV', invalid('namespace')),
    at('function=exists.', invalid('namespace')),
    at('function=exists&namespace=DEV', invalid('namespace')),
    at('function=ghost', notFound),
    at('function=exists.nope', notFound),
  ];
}

function jobCases(): Case[] {
  const base = { function: 'trainer', length: 1 };
  const submit = (name: string, b: unknown, want: Omit<Case, 'name' | 'method' | 'path'>, query = ''): Case => ({
    name: `submit job${query}: ${name}`,
    method: 'POST',
    path: `/system/jobs${query}`,
    body: b,
    ...want,
  });
  const field = (f: string, values: unknown[], over: Record<string, unknown> = base) =>
    values.map((v) => submit(`${f} ${describeValue(v)}`, { ...over, [f]: v }, invalid(f)));
  const { length: _l, ...noLength } = base;
  const id = '0b5e3f2a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
  return [
    ...[[], 'x', 5, null, true].map((b) => submit(`body ${describeValue(b)}`, b, invalid('body'))),
    submit('malformed JSON', undefined, { raw: '{"function":', status: 400, code: 'malformed_json', field: 'body' }),
    submit('no function', { length: 1 }, invalid('function')),
    ...field('function', ['', ...NOT_STRINGS, ...BAD_LABELS.filter((v) => !v.includes('.'))]),
    submit('function in namespace DEV', { ...base, function: 'trainer.DEV' }, invalid('namespace')),
    submit('namespace DEV', { ...base, namespace: 'DEV' }, invalid('namespace')),
    submit('neither length nor iterations', noLength, invalid('length')),
    submit('both length and iterations', { ...base, iterations: 10 }, invalid('length')),
    ...field('length', [0, -1, 1.5, '5', null, true, 100001, 1e300]),
    ...field('iterations', [0, -1, 1.5, '5', 1e10], noLength),
    ...field('batch_size', [0, -1, 1.5, '32', 65537]),
    ...field('learning_rate', [0, -1, 100, 'x', null, true]),
    ...field('model', ['', 5, true]),
    ...field('dataset', ['', 5, []]),
    ...field('max_workers', [0, 1025, 'x', 1.5]),
    ...field('deadline', ['2024-01-01', '2000-01-01T00:00:00Z', 0, true, {}, [], 'NaN']),
    ...field('soft_deadline', ['2024-01-01', '2000-01-01T00:00:00Z', 0, true, {}]),
    // owned by jobs (issue 9, training job inputs): refused by gateway/jobs/job-request.ts once merged
    ...['2024-13-45T99:99:99Z', 1e13, 1e300, -5, 'tomorrow'].flatMap((v) =>
      ['deadline', 'soft_deadline'].map((f) => ({ ...submit(`${f} ${describeValue(v)}`, { ...base, [f]: v }, invalid(f)), ownedBy: 'jobs' as const })),
    ),
    // owned by jobs: dataset and model paths are confined to their stores
    ...['/etc/passwd', '../../../../../etc/hostname'].map((v) =>
      ({ ...submit(`dataset ${describeValue(v)}`, { ...base, dataset: v }, invalid('dataset')), ownedBy: 'jobs' as const })),
    { ...submit('model "../../../../etc/passwd"', { ...base, model: '../../../../etc/passwd' }, invalid('model')), ownedBy: 'jobs' as const },
    ...['maybe', '1', 'TRUE', ''].map((v) => submit(`dryRun=${v}`, base, invalid('dryRun'), `?dryRun=${v}`)),
    submit('dryRun[]', base, invalid('dryRun'), '?dryRun[]=true'),
    submit('bad length', { ...base, length: 0 }, invalid('length'), '?dryRun=true'),
    submit('unknown function', { ...base, function: 'ghost' }, jobFnNotFound),
    submit('unknown function', { ...base, function: 'ghost' }, jobFnNotFound, '?dryRun=true'),
    submit('function in another namespace', { ...base, function: 'trainer.elsewhere' }, jobFnNotFound),
    submit('an inference function', { ...base, function: 'exists' }, invalid('function')),
    get('/system/jobs', { status: 200 }),
    ...['x', '123', 'g'.repeat(36), 'a'.repeat(37), id.toUpperCase(), '%zz'].flatMap((v) => [
      get(`/system/jobs/${v}`, invalid('id')),
      { name: `DELETE /system/jobs/${v}`, method: 'DELETE', path: `/system/jobs/${v}`, ...invalid('id') },
      get(`/system/jobs/${v}/events`, invalid('id')),
    ]),
    get(`/system/jobs/${id}`, notFound),
    { name: `DELETE /system/jobs/${id}`, method: 'DELETE', path: `/system/jobs/${id}`, ...notFound },
    get(`/system/jobs/${id}/events`, notFound),
    ...['abc', '1-', '-1', '1.5'].map((v) =>
      get(`/system/jobs/${id}/events`, { headers: { 'last-event-id': v }, ...invalid('Last-Event-ID') }, `/system/jobs/{id}/events Last-Event-ID ${v}`)),
  ];
}

function secretCases(): Case[] {
  const cases: Case[] = [get('/system/secrets', { status: 200 }), get('/system/secrets?namespace=DEV', invalid('namespace'))];
  for (const method of ['POST', 'PUT', 'DELETE']) {
    const s = (name: string, b: unknown, want: Omit<Case, 'name' | 'method' | 'path'>, query = ''): Case =>
      ({ name: `${method} secret${query}: ${name}`, method, path: `/system/secrets${query}`, body: b, ...want });
    const value = method === 'DELETE' ? {} : { value: 'v' };
    cases.push(
      ...[[], 'x', 5, null].map((b) => s(`body ${describeValue(b)}`, b, invalid('body'))),
      s('malformed JSON', undefined, { raw: '{"name":', status: 400, code: 'malformed_json', field: 'body' }),
      s('no name', value, invalid('name')),
      ...[null, '', ...NOT_STRINGS, ...BAD_LABELS].map((v) => s(`name ${describeValue(v)}`, { ...value, name: v }, invalid('name'))),
      ...['DEV', 5].map((v) => s(`namespace ${describeValue(v)}`, { ...value, name: 'k', namespace: v }, invalid('namespace'))),
      s('namespace in query', { ...value, name: 'k' }, invalid('namespace'), '?namespace=DEV'),
    );
    if (method !== 'DELETE') {
      cases.push(
        ...NOT_STRINGS.map((v) => s(`value ${describeValue(v)}`, { name: 'k', value: v }, invalid('value'))),
        ...['%%%', 5, 'a b', '====', 'YQ==='].map((v) => s(`rawValue ${describeValue(v)}`, { name: 'k', rawValue: v }, invalid('rawValue'))),
        s('no value', { name: 'k' }, invalid('value')),
      );
    }
    if (method === 'POST') cases.push(s('duplicate', { name: 'dup', value: 'v' }, { status: 409, code: 'conflict', field: 'name' }));
    if (method === 'PUT') cases.push(s('unknown', { name: 'ghost', value: 'v' }, notFound));
    if (method === 'DELETE') cases.push(s('with a value', { name: 'dup', value: 'v' }, invalid('value')), s('unknown', { name: 'ghost' }, notFound));
  }
  return cases;
}

function namespaceCases(): Case[] {
  const nsPath = (v: string) => `/system/namespace/${v}`;
  const unsupported = { status: 501, code: 'not_implemented' };
  return [
    get('/system/namespaces', { status: 200 }),
    ...BAD_LABELS.map((v) => get(nsPath(q(v)), invalid('namespace'))),
    get(nsPath('%zz'), invalid('namespace')),
    get(nsPath('nope'), notFound),
    get(nsPath('openfaas-fn'), { status: 200 }),
    // documented: namespaces are created by deploying into them
    ...(['POST', 'PUT', 'DELETE'] as const).flatMap((method) =>
      ['x', 'openfaas-fn'].map((ns): Case => ({ name: `${method} ${nsPath(ns)}`, method, path: nsPath(ns), body: { name: ns }, ...unsupported })),
    ),
    { name: 'POST /system/namespace', method: 'POST', path: '/system/namespace', body: {}, ...unsupported },
  ];
}

function openCases(): Case[] {
  const noRoute = (method: string, path: string): Case => ({ name: `${method} ${path} (no route)`, method, path, ...notFound });
  return [
    get('/system/info', { status: 200 }),
    noRoute('POST', '/system/info'),
    noRoute('DELETE', '/system/info'),
    get('/healthz', { status: 200 }),
    noRoute('POST', '/healthz'),
    get('/metrics', { status: 200 }),
    noRoute('PUT', '/metrics'),
    noRoute('GET', '/system/nothing-here'),
    noRoute('GET', '/system'),
    noRoute('GET', '/nothing'),
    noRoute('POST', '/function'),
    noRoute('POST', '/async-function'),
    noRoute('GET', '/system/functions/extra'),
  ];
}

export function systemCases(): Case[] {
  return [
    ...logCases(),
    ...functionQueryCases('/system/capability'),
    get('/system/capability?function=exists', notFound), // not profiled
    ...functionQueryCases('/system/scaling-events'),
    ...['0', '-1', '1001', 'abc', '1.5', '1e4', ''].map((v) => get(`/system/scaling-events?function=exists&limit=${v}`, invalid('limit'))),
    get('/system/scaling-events?function=exists', { status: 200 }),
    get('/system/scaling-events?function=exists&limit=1000', { status: 200 }),
    ...jobCases(),
    ...secretCases(),
    ...namespaceCases(),
    ...openCases(),
  ];
}
