/** The gateway's Open Inference Protocol paths and infer-envelope check (pure; issue 25). */
import { PlatformError } from '../../gateway/errors';
import { notReadyReason } from '../../gateway/proxy/v2-handler';
import { parseV2Path, v2Error } from '../../gateway/proxy/v2-paths';
import { checkInferRequest } from '../../gateway/proxy/v2-request';

const err = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof PlatformError ? `${e.status} ${e.field ?? ''}` : `not a PlatformError: ${String(e)}`;
  }
  return 'ok';
};
const ns = 'openfaas-fn';

describe('parseV2Path', () => {
  test.each([
    ['/v2', { kind: 'server' }],
    ['/v2/', { kind: 'server' }],
    ['/v2/health/live', { kind: 'live' }],
    ['/v2/health/ready', { kind: 'ready' }],
    ['/v2/models/digits', { kind: 'model', ref: { name: 'digits', namespace: ns }, path: '/v2/models/digits' }],
    ['/v2/models/digits.team-a/ready', { kind: 'modelReady', ref: { name: 'digits', namespace: 'team-a' }, path: '/v2/models/digits.team-a/ready' }],
    ['/v2/models/digits/versions/3/infer?x=1',
      { kind: 'infer', ref: { name: 'digits', namespace: ns }, version: '3', path: '/v2/models/digits/versions/3/infer?x=1' }],
    ['/v2/models/digits/versions/v1.2_rc-1', { kind: 'model', ref: { name: 'digits', namespace: ns }, version: 'v1.2_rc-1',
      path: '/v2/models/digits/versions/v1.2_rc-1' }],
  ])('%s', (url, want) => {
    expect(parseV2Path(url)).toEqual(want);
  });

  test.each([
    ['/v2/health', '404 path'], ['/v2/health/started', '404 path'], ['/v2/models', '404 path'], ['/v2/models/digits/predict', '404 path'],
    ['/v2/models/digits/versions', '400 version'], ['/v2/models/digits/versions/%zz/infer', '400 version'],
    ['/v2/models/digits/versions/a%20b/infer', '400 version'], ['/v2/models/Digits/infer', '400 name'], ['/v2/models/%E0/infer', '400 name'],
    ['/v2/models/digits.BAD/infer', '400 namespace'], ['/v2/models//infer', '400 name'], ['/v2/models/digits/infer/extra', '404 path'],
    ['/v2/repository/index', '404 path'],
  ])('%s → %s', (url, want) => {
    expect(err(() => parseV2Path(url))).toBe(want);
  });
});

describe('v2Error', () => {
  it('is the protocol body {"error": message} plus code and field, with the /function/ status', () => {
    const h = v2Error(new PlatformError('validation_failed' as never, 'inputs: is required', 'inputs'));
    expect(h).toEqual({ status: 400, headers: {}, body: { error: 'inputs: is required', code: 'validation_failed', field: 'inputs' } });
    expect(v2Error(new Error('boom')).status).toBe(500);
  });
});

const body = (doc: unknown) => Buffer.from(JSON.stringify(doc));
const input = (over: Record<string, unknown> = {}) => ({ name: 'x', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3], ...over });

describe('checkInferRequest: well-formed envelopes pass', () => {
  test.each([
    ['flat data', { inputs: [input()] }],
    ['nested data', { inputs: [input({ data: [[1, 2, 3]] })] }],
    ['id, parameters, outputs', { id: 'r1', parameters: { a: 1 }, inputs: [input()], outputs: [{ name: 'y', parameters: { binary_data: false } }] }],
    ['several int64 inputs', { inputs: [input({ name: 'ids', datatype: 'INT64', data: [101, 2023, 102] }),
      input({ name: 'mask', datatype: 'INT64', data: [1, 1, 1] })] }],
    ['BYTES', { inputs: [input({ datatype: 'BYTES', shape: [2], data: ['a', 'b'] })] }],
    ['BOOL', { inputs: [input({ datatype: 'BOOL', shape: [3], data: [true, false, 1] })] }],
    ['empty tensor', { inputs: [input({ shape: [0, 3], data: [] })] }],
  ])('%s', (_n, doc) => {
    expect(err(() => checkInferRequest(body(doc), undefined))).toBe('ok');
  });

  it('binary extension: FP32 and BYTES after the JSON header', () => {
    const header = Buffer.from(JSON.stringify({ inputs: [
      { name: 'x', datatype: 'FP32', shape: [2], parameters: { binary_data_size: 8 } },
      { name: 's', datatype: 'BYTES', shape: [1], parameters: { binary_data_size: 7 } },
    ] }));
    const f = Buffer.alloc(8);
    f.writeFloatLE(1, 0);
    const s = Buffer.concat([Buffer.from([3, 0, 0, 0]), Buffer.from('abc')]);
    const all = Buffer.concat([header, f, s]);
    expect(checkInferRequest(all, String(header.length))).toEqual({ headerLength: header.length, inputs: 2 });
  });
});

describe('checkInferRequest: malformed envelopes are a 400 naming the field', () => {
  test.each([
    ['not JSON', Buffer.from('{"inputs": ['), 'body'],
    ['JSON array', body([input()]), 'body'],
    ['JSON string', body('x'), 'body'],
    ['empty body', Buffer.alloc(0), 'body'],
    ['no inputs', body({}), 'inputs'],
    ['inputs not an array', body({ inputs: {} }), 'inputs'],
    ['inputs empty', body({ inputs: [] }), 'inputs'],
    ['id a number', body({ id: 7, inputs: [input()] }), 'id'],
    ['parameters an array', body({ parameters: [], inputs: [input()] }), 'parameters'],
    ['input not an object', body({ inputs: [7] }), 'inputs[0]'],
    ['input without name', body({ inputs: [input({ name: undefined })] }), 'inputs[0].name'],
    ['input name twice', body({ inputs: [input(), input()] }), 'inputs[1].name'],
    ['unknown datatype', body({ inputs: [input({ datatype: 'FLOAT32' })] }), 'inputs[0].datatype'],
    ['datatype lower-case', body({ inputs: [input({ datatype: 'fp32' })] }), 'inputs[0].datatype'],
    ['shape missing', body({ inputs: [input({ shape: undefined })] }), 'inputs[0].shape'],
    ['shape negative', body({ inputs: [input({ shape: [-1, 3] })] }), 'inputs[0].shape'],
    ['shape fractional', body({ inputs: [input({ shape: [1.5, 2] })] }), 'inputs[0].shape'],
    ['shape huge', body({ inputs: [input({ shape: [1e9, 1e9, 1e9] })] }), 'inputs[0].shape'],
    ['shape/data mismatch', body({ inputs: [input({ shape: [2, 3] })] }), 'inputs[0].data'],
    ['data missing', body({ inputs: [input({ data: undefined })] }), 'inputs[0].data'],
    ['data a string', body({ inputs: [input({ data: '1,2,3' })] }), 'inputs[0].data'],
    ['FP32 data with a string', body({ inputs: [input({ data: [1, '2', 3] })] }), 'inputs[0].data'],
    ['INT8 out of range', body({ inputs: [input({ datatype: 'INT8', data: [1, 2, 300] })] }), 'inputs[0].data'],
    ['INT32 fractional', body({ inputs: [input({ datatype: 'INT32', data: [1, 2, 3.5] })] }), 'inputs[0].data'],
    ['UINT8 negative', body({ inputs: [input({ datatype: 'UINT8', data: [1, 2, -3] })] }), 'inputs[0].data'],
    ['BYTES of numbers', body({ inputs: [input({ datatype: 'BYTES', data: [1, 2, 3] })] }), 'inputs[0].data'],
    ['BOOL of strings', body({ inputs: [input({ datatype: 'BOOL', data: ['true', 'false', 'x'] })] }), 'inputs[0].data'],
    ['input parameters a string', body({ inputs: [input({ parameters: 'x' })] }), 'inputs[0].parameters'],
    ['outputs an object', body({ inputs: [input()], outputs: { name: 'y' } }), 'outputs'],
    ['output without name', body({ inputs: [input()], outputs: [{}] }), 'outputs[0].name'],
    ['output twice', body({ inputs: [input()], outputs: [{ name: 'y' }, { name: 'y' }] }), 'outputs[1].name'],
    ['binary size without the header', body({ inputs: [input({ data: undefined, parameters: { binary_data_size: 12 } })] }),
      'inputs[0].parameters.binary_data_size'],
  ])('%s → %s', (_n, b, field) => {
    expect(err(() => checkInferRequest(b, undefined))).toBe(`400 ${field}`);
  });

  const header = (inputs: unknown[]) => Buffer.from(JSON.stringify({ inputs }));
  test.each([
    ['header length not a number', 'Inference-Header-Content-Length', () => checkInferRequest(body({ inputs: [input()] }), 'ten')],
    ['header length negative', 'Inference-Header-Content-Length', () => checkInferRequest(body({ inputs: [input()] }), '-1')],
    ['header length past the body', 'Inference-Header-Content-Length', () => checkInferRequest(body({ inputs: [input()] }), '100000')],
    ['header length cuts the JSON', 'body', () => checkInferRequest(body({ inputs: [input()] }), '10')],
    ['binary region longer than declared', 'Inference-Header-Content-Length', () => {
      const h = header([{ name: 'x', datatype: 'FP32', shape: [2], parameters: { binary_data_size: 8 } }]);
      return checkInferRequest(Buffer.concat([h, Buffer.alloc(12)]), String(h.length));
    }],
    ['binary size shorter than the body has', 'inputs[0].parameters.binary_data_size', () => {
      const h = header([{ name: 'x', datatype: 'FP32', shape: [2], parameters: { binary_data_size: 8 } }]);
      return checkInferRequest(Buffer.concat([h, Buffer.alloc(4)]), String(h.length));
    }],
    ['binary size not the shape\'s', 'inputs[0].parameters.binary_data_size', () => {
      const h = header([{ name: 'x', datatype: 'FP32', shape: [3], parameters: { binary_data_size: 8 } }]);
      return checkInferRequest(Buffer.concat([h, Buffer.alloc(8)]), String(h.length));
    }],
    ['binary BYTES length that lies', 'inputs[0].parameters.binary_data_size', () => {
      const h = header([{ name: 's', datatype: 'BYTES', shape: [1], parameters: { binary_data_size: 7 } }]);
      return checkInferRequest(Buffer.concat([h, Buffer.from([200, 0, 0, 0]), Buffer.from('abc')]), String(h.length));
    }],
    ['binary BYTES count not the shape\'s', 'inputs[0].parameters.binary_data_size', () => {
      const h = header([{ name: 's', datatype: 'BYTES', shape: [2], parameters: { binary_data_size: 7 } }]);
      return checkInferRequest(Buffer.concat([h, Buffer.from([3, 0, 0, 0]), Buffer.from('abc')]), String(h.length));
    }],
    ['binary size and data both', 'inputs[0].data', () => {
      const h = header([{ name: 'x', datatype: 'FP32', shape: [2], data: [1, 2], parameters: { binary_data_size: 8 } }]);
      return checkInferRequest(Buffer.concat([h, Buffer.alloc(8)]), String(h.length));
    }],
  ])('%s → %s', (_n, field, f) => {
    expect(err(f)).toBe(`400 ${field}`);
  });
});

describe('notReadyReason', () => {
  const u = [{ id: 'r', host: '', port: 0, weight: 1, outstanding: 0 }];
  test.each([
    [{ upstreams: u, desired: 1, crashError: undefined }, undefined],
    [{ upstreams: [], desired: 0, crashError: undefined }, undefined],
    [{ upstreams: [], desired: 1, crashError: undefined }, 'none of its 1 replica(s) is ready yet'],
    [{ upstreams: [], desired: 1, crashError: 'exit 1' }, 'every replica crashed; last error: exit 1'],
  ])('%j → %s', (s, want) => {
    expect(notReadyReason(s)).toBe(want);
  });
});
