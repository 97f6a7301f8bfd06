/**
 * The Open Inference Protocol's endpoints on the gateway fed bad input (issue 25): malformed
 * paths, methods, infer envelopes (JSON, shapes, datatypes, BYTES, binary extension lengths that
 * lie), and requests only the model can judge (unknown inputs and outputs, wrong shape or datatype
 * for it). Answers are the protocol's `{"error": "..."}`; the gateway's own carry `code` and
 * `field`, the runtime's name the input or output in `error`.
 */
import { BAD_LABELS } from './case';

export interface V2BadCase {
  name: string;
  method: string;
  path: string;
  /** Sent as is. */
  raw?: Buffer | string;
  headers?: Record<string, string>;
  status: number;
  /** The gateway's answer: its code and field (field absent: none). */
  code?: string;
  field?: string;
  /** The runtime's answer: `error` must contain this. */
  mention?: string;
}

/** The model the cases run against: functions/digits-classify (input pixels FP32 [-1, 64], output probabilities). */
export const V2_MODEL = 'digits';

const INFER = `/v2/models/${V2_MODEL}/infer`;
const pixels = (over: Record<string, unknown> = {}) => ({ name: 'pixels', datatype: 'FP32', shape: [1, 64], data: Array(64).fill(0), ...over });
const doc = (d: unknown) => JSON.stringify(d);
const bad = (name: string, raw: Buffer | string, field: string, headers: Record<string, string> = {}): V2BadCase =>
  ({ name: `infer: ${name}`, method: 'POST', path: INFER, raw, headers, status: 400, code: 'validation_failed', field });

/** JSON header then binary bytes, with the header length declared (or `declared` instead). */
function binary(inputs: unknown[], tail: Buffer, declared?: string): { raw: Buffer; headers: Record<string, string> } {
  const h = Buffer.from(JSON.stringify({ inputs }));
  const headers = { 'inference-header-content-length': declared ?? String(h.length), 'content-type': 'application/octet-stream' };
  return { raw: Buffer.concat([h, tail]), headers };
}
const binCase = (name: string, b: { raw: Buffer; headers: Record<string, string> }, field: string) => bad(name, b.raw, field, b.headers);
const len = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

export function v2Cases(): V2BadCase[] {
  const cases: V2BadCase[] = [];
  const route = (name: string, method: string, path: string, status: number, code: string, field?: string): V2BadCase =>
    ({ name, method, path, status, code, ...(field ? { field } : {}), ...(method === 'POST' ? { raw: doc({ inputs: [pixels()] }) } : {}) });
  // paths and names
  for (const l of BAD_LABELS.filter((v) => !v.includes('.'))) {
    cases.push(route(`model ${JSON.stringify(l)}`, 'POST', `/v2/models/${encodeURIComponent(l)}/infer`, 400, 'validation_failed', 'name'));
  }
  for (const suffix of ['', '/ready', '/infer']) {
    const m = suffix === '/infer' ? 'POST' : 'GET';
    cases.push(
      route(`${m} ghost${suffix}`, m, `/v2/models/ghost${suffix}`, 404, 'function_not_found', 'name'),
      route(`${m} ghost.nope${suffix}`, m, `/v2/models/ghost.nope${suffix}`, 404, 'function_not_found', 'name'),
      route(`${m} digits.nope${suffix} (other namespace)`, m, `/v2/models/digits.nope${suffix}`, 404, 'function_not_found', 'name'),
      route(`${m} trainer${suffix} (a training function)`, m, `/v2/models/trainer${suffix}`, 400, 'validation_failed', 'function'),
      route(`${m} %zz${suffix}`, m, `/v2/models/%zz${suffix}`, 400, 'validation_failed', 'name'),
      route(`${m} digits.BAD${suffix}`, m, `/v2/models/digits.BAD${suffix}`, 400, 'validation_failed', 'namespace'),
      route(`${m} digits/versions/%zz${suffix}`, m, `/v2/models/digits/versions/%zz${suffix}`, 400, 'validation_failed', 'version'),
      route(`${m} digits/versions/a b${suffix}`, m, `/v2/models/digits/versions/a%20b${suffix}`, 400, 'validation_failed', 'version'),
    );
  }
  // endpoints that take no input: junk around them changes nothing
  const ok = (name: string, path: string, raw?: string): V2BadCase => ({ name, method: 'GET', path, status: 200, ...(raw !== undefined ? { raw } : {}) });
  cases.push(ok('GET /v2/health/live with a body', '/v2/health/live', '{"x":'), ok('GET /v2/health/ready with a body', '/v2/health/ready', 'junk'),
    ok('GET /v2 with a body', '/v2', '[1,2'), ok('GET /v2/models/digits with a body', '/v2/models/digits', '{'));
  cases.push(
    { ...bad('versioned infer, not JSON', '{"inputs"', 'body'), path: `/v2/models/${V2_MODEL}/versions/1/infer` },
    { ...bad('versioned infer, no inputs', doc({}), 'inputs'), path: `/v2/models/${V2_MODEL}/versions/1/infer` },
    { ...bad('versioned infer, shape/data mismatch', doc({ inputs: [pixels({ shape: [2, 64] })] }), 'inputs[0].data'),
      path: `/v2/models/${V2_MODEL}/versions/1/infer` },
    route('GET digits/versions/ (no version)', 'GET', '/v2/models/digits/versions/', 400, 'validation_failed', 'version'),
    route('GET digits/versions/999/ready', 'GET', '/v2/models/digits/versions/999/ready', 404, 'not_found', 'version'),
    ...['/v2/health', '/v2/health/started', '/v2/models', '/v2/models/digits/explain', '/v2/models/digits/infer/x', '/v2/repository/index', '/v2/logging']
      .map((p) => route(`GET ${p}`, 'GET', p, 404, 'not_found', 'path')),
    ...[['POST', '/v2/health/live'], ['DELETE', '/v2/health/ready'], ['PUT', '/v2'], ['POST', '/v2/models/digits'], ['DELETE', '/v2/models/digits'],
      ['POST', '/v2/models/digits/ready'], ['GET', INFER], ['PUT', INFER], ['DELETE', INFER], ['PATCH', INFER]]
      .map(([m, p]) => route(`${m} ${p}`, m, p, 405, 'bad_request', 'method')),
  );
  // the envelope (the gateway's check)
  cases.push(
    bad('empty body', '', 'body'),
    bad('not JSON', '{"inputs": [', 'body'),
    bad('JSON with a trailing comma', '{"inputs": [],}', 'body'),
    bad('NaN literal', doc({ inputs: [pixels()] }).replace('"data":[0', '"data":[NaN'), 'body'),
    bad('a JSON array', doc([pixels()]), 'body'),
    bad('a JSON string', doc('inputs'), 'body'),
    bad('null', 'null', 'body'),
    bad('no inputs', doc({ id: 'x' }), 'inputs'),
    bad('inputs null', doc({ inputs: null }), 'inputs'),
    bad('inputs an object', doc({ inputs: pixels() }), 'inputs'),
    bad('inputs empty', doc({ inputs: [] }), 'inputs'),
    bad('id a number', doc({ id: 1, inputs: [pixels()] }), 'id'),
    bad('parameters a list', doc({ parameters: [1], inputs: [pixels()] }), 'parameters'),
    bad('input a number', doc({ inputs: [1] }), 'inputs[0]'),
    bad('input name missing', doc({ inputs: [pixels({ name: undefined })] }), 'inputs[0].name'),
    bad('input name empty', doc({ inputs: [pixels({ name: '' })] }), 'inputs[0].name'),
    bad('input name a number', doc({ inputs: [pixels({ name: 7 })] }), 'inputs[0].name'),
    bad('input given twice', doc({ inputs: [pixels(), pixels()] }), 'inputs[1].name'),
    ...['FLOAT32', 'fp32', 'FP8', 'STRING', 'INT128', ''].map((dt) => bad(`unknown datatype ${JSON.stringify(dt)}`, doc({ inputs: [pixels({ datatype: dt })] }),
      'inputs[0].datatype')),
    bad('datatype a number', doc({ inputs: [pixels({ datatype: 32 })] }), 'inputs[0].datatype'),
    bad('shape missing', doc({ inputs: [pixels({ shape: undefined })] }), 'inputs[0].shape'),
    bad('shape a string', doc({ inputs: [pixels({ shape: '1,64' })] }), 'inputs[0].shape'),
    bad('shape with -1', doc({ inputs: [pixels({ shape: [-1, 64] })] }), 'inputs[0].shape'),
    bad('shape with 1.5', doc({ inputs: [pixels({ shape: [1.5, 64] })] }), 'inputs[0].shape'),
    bad('shape with a string', doc({ inputs: [pixels({ shape: ['1', 64] })] }), 'inputs[0].shape'),
    bad('huge shape', doc({ inputs: [pixels({ shape: [1e9, 1e9, 1e9, 1e9] })] }), 'inputs[0].shape'),
    bad('huge shape, 2^53 elements', doc({ inputs: [pixels({ shape: [2 ** 26, 2 ** 27] })] }), 'inputs[0].shape'),
    bad('rank 40', doc({ inputs: [pixels({ shape: Array(40).fill(1) })] }), 'inputs[0].shape'),
    bad('shape/data mismatch (fewer)', doc({ inputs: [pixels({ data: Array(63).fill(0) })] }), 'inputs[0].data'),
    bad('shape/data mismatch (more)', doc({ inputs: [pixels({ data: Array(65).fill(0) })] }), 'inputs[0].data'),
    bad('data missing', doc({ inputs: [pixels({ data: undefined })] }), 'inputs[0].data'),
    bad('data a string', doc({ inputs: [pixels({ data: '0,0,0' })] }), 'inputs[0].data'),
    bad('data an object', doc({ inputs: [pixels({ data: { a: 1 } })] }), 'inputs[0].data'),
    bad('data with a string', doc({ inputs: [pixels({ data: ['0', ...Array(63).fill(0)] })] }), 'inputs[0].data'),
    bad('data with null', doc({ inputs: [pixels({ data: [null, ...Array(63).fill(0)] })] }), 'inputs[0].data'),
    bad('INT8 of 300', doc({ inputs: [pixels({ datatype: 'INT8', shape: [1], data: [300] })] }), 'inputs[0].data'),
    bad('UINT16 of -1', doc({ inputs: [pixels({ datatype: 'UINT16', shape: [1], data: [-1] })] }), 'inputs[0].data'),
    bad('INT32 of 1.5', doc({ inputs: [pixels({ datatype: 'INT32', shape: [1], data: [1.5] })] }), 'inputs[0].data'),
    bad('BYTES of numbers', doc({ inputs: [pixels({ datatype: 'BYTES', shape: [2], data: [1, 2] })] }), 'inputs[0].data'),
    bad('BYTES of objects', doc({ inputs: [pixels({ datatype: 'BYTES', shape: [1], data: [{ b64: 'eA==' }] })] }), 'inputs[0].data'),
    bad('BOOL of strings', doc({ inputs: [pixels({ datatype: 'BOOL', shape: [1], data: ['true'] })] }), 'inputs[0].data'),
    bad('input parameters a string', doc({ inputs: [pixels({ parameters: 'binary' })] }), 'inputs[0].parameters'),
    bad('outputs an object', doc({ inputs: [pixels()], outputs: { name: 'probabilities' } }), 'outputs'),
    bad('output without a name', doc({ inputs: [pixels()], outputs: [{}] }), 'outputs[0].name'),
    bad('output a string', doc({ inputs: [pixels()], outputs: ['probabilities'] }), 'outputs[0]'),
    bad('output requested twice', doc({ inputs: [pixels()], outputs: [{ name: 'probabilities' }, { name: 'probabilities' }] }), 'outputs[1].name'),
    bad('output parameters a list', doc({ inputs: [pixels()], outputs: [{ name: 'probabilities', parameters: [] }] }), 'outputs[0].parameters'),
  );
  // the binary tensor extension: lengths that lie
  const fp = (size: number) => [{ name: 'pixels', datatype: 'FP32', shape: [1, 64], parameters: { binary_data_size: size } }];
  cases.push(
    binCase('header length not a number', binary(fp(256), Buffer.alloc(256), 'many'), 'Inference-Header-Content-Length'),
    binCase('header length negative', binary(fp(256), Buffer.alloc(256), '-5'), 'Inference-Header-Content-Length'),
    binCase('header length past the body', binary(fp(256), Buffer.alloc(256), '99999'), 'Inference-Header-Content-Length'),
    binCase('header length inside the JSON', binary(fp(256), Buffer.alloc(256), '20'), 'body'),
    binCase('header length 0', binary(fp(256), Buffer.alloc(256), '0'), 'body'),
    binCase('binary data shorter than declared', binary(fp(256), Buffer.alloc(200)), 'inputs[0].parameters.binary_data_size'),
    binCase('binary data longer than declared', binary(fp(256), Buffer.alloc(300)), 'Inference-Header-Content-Length'),
    binCase('binary size not the shape\'s', binary(fp(252), Buffer.alloc(252)), 'inputs[0].parameters.binary_data_size'),
    binCase('binary size negative', binary(fp(-4), Buffer.alloc(0)), 'inputs[0].parameters.binary_data_size'),
    binCase('binary size a string', binary([{ ...fp(256)[0], parameters: { binary_data_size: '256' } }], Buffer.alloc(256)),
      'inputs[0].parameters.binary_data_size'),
    binCase('binary size and data both', binary([{ ...fp(256)[0], data: Array(64).fill(0) }], Buffer.alloc(256)), 'inputs[0].data'),
    binCase('binary size without the header', { raw: binary(fp(256), Buffer.alloc(256)).raw, headers: {} }, 'body'),
    binCase('BYTES element length past the end', binary([{ name: 's', datatype: 'BYTES', shape: [1], parameters: { binary_data_size: 7 } }],
      Buffer.concat([len(100), Buffer.from('abc')])), 'inputs[0].parameters.binary_data_size'),
    binCase('BYTES count not the shape\'s', binary([{ name: 's', datatype: 'BYTES', shape: [2], parameters: { binary_data_size: 7 } }],
      Buffer.concat([len(3), Buffer.from('abc')])), 'inputs[0].parameters.binary_data_size'),
    binCase('BYTES length prefix cut', binary([{ name: 's', datatype: 'BYTES', shape: [1], parameters: { binary_data_size: 2 } }],
      Buffer.from([1, 0])), 'inputs[0].parameters.binary_data_size'),
  );
  // only the model can judge these: the runtime's 400, naming the input or output
  const model = (name: string, d: unknown, mention: string): V2BadCase =>
    ({ name: `infer (model): ${name}`, method: 'POST', path: INFER, raw: doc(d), status: 400, mention });
  cases.push(
    model('unknown input', { inputs: [pixels({ name: 'nosuch' })] }, 'nosuch'),
    model('unknown output', { inputs: [pixels()], outputs: [{ name: 'nosuch' }] }, 'nosuch'),
    model('wrong datatype (INT64 for FP32)', { inputs: [pixels({ datatype: 'INT64' })] }, 'pixels'),
    model('wrong datatype (FP64 for FP32)', { inputs: [pixels({ datatype: 'FP64' })] }, 'pixels'),
    model('wrong shape [1, 63]', { inputs: [pixels({ shape: [1, 63], data: Array(63).fill(0) })] }, 'pixels'),
    model('wrong rank [64]', { inputs: [pixels({ shape: [64] })] }, 'pixels'),
    model('wrong rank [1, 1, 64]', { inputs: [pixels({ shape: [1, 1, 64] })] }, 'pixels'),
    model('an extra input', { inputs: [pixels(), pixels({ name: 'extra' })] }, 'extra'),
  );
  return cases;
}
