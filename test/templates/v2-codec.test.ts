/**
 * templates/ml-inference/v2.js (issue 25, part 1): the Open Inference Protocol's paths, infer
 * request parsing (JSON flat/nested, the binary tensor extension) and answer encoding. Pure.
 */
// eslint-disable-next-line @typescript-eslint/no-var-requires
const v2 = require('../../templates/ml-inference/v2');

const json = (doc: unknown) => Buffer.from(JSON.stringify(doc));
/** A body with the binary extension: JSON, then the raw parts; the header says where the JSON ends. */
function binaryBody(doc: unknown, ...parts: Buffer[]): { body: Buffer; headers: Record<string, string> } {
  const head = json(doc);
  return { body: Buffer.concat([head, ...parts]), headers: { 'inference-header-content-length': String(head.length) } };
}
function badInput(body: Buffer, headers: Record<string, string> = {}): string {
  try {
    v2.parseInferRequest(body, headers);
  } catch (err: any) {
    expect(err.status).toBe(400);
    return err.message;
  }
  throw new Error('parsed without error');
}
const bytesElem = (s: string) => {
  const b = Buffer.from(s);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(b.length);
  return Buffer.concat([len, b]);
};

describe('matchV2', () => {
  test.each([
    ['/v2', { kind: 'server' }], ['/v2/', { kind: 'server' }], ['/v2/health/live', { kind: 'live' }], ['/v2/health/ready', { kind: 'ready' }],
    ['/v2/models/digits', { kind: 'model', name: 'digits', version: null }],
    ['/v2/models/digits/versions/3', { kind: 'model', name: 'digits', version: '3' }],
    ['/v2/models/digits/ready', { kind: 'modelReady', name: 'digits', version: null }],
    ['/v2/models/digits/versions/1/ready', { kind: 'modelReady', name: 'digits', version: '1' }],
    ['/v2/models/digits/infer', { kind: 'infer', name: 'digits', version: null }],
    ['/v2/models/a%20b/versions/1/infer', { kind: 'infer', name: 'a b', version: '1' }],
    ['/v2/models/digits/config', { kind: 'unknown' }], ['/v2/repository/index', { kind: 'unknown' }], ['/v2/models/%E0%A4%A/infer', { kind: 'unknown' }],
    ['/v2/health', { kind: 'unknown' }], ['/v2/models//infer', { kind: 'unknown' }],
  ])('%s', (path, want) => {
    expect(v2.matchV2(path)).toEqual(want);
  });

  test.each(['/', '/function/digits', '/v2x', '/v20/models/a/infer', '/_/health'])('%s is not a v2 path', (path) => {
    expect(v2.matchV2(path)).toBeNull();
  });
});

describe('parseInferRequest: JSON', () => {
  test("the protocol document's example: UINT32 [2,2] and BOOL, outputs selected, id", () => {
    const r = v2.parseInferRequest(json({
      id: '42',
      inputs: [
        { name: 'input0', shape: [2, 2], datatype: 'UINT32', data: [1, 2, 3, 4] },
        { name: 'input1', shape: [3], datatype: 'BOOL', data: [true, false, true] },
      ],
      outputs: [{ name: 'output0' }],
    }), {});
    expect(r.id).toBe('42');
    expect(r.inputs.input0).toEqual({ datatype: 'UINT32', shape: [2, 2], data: new Uint32Array([1, 2, 3, 4]) });
    expect(r.inputs.input1.data).toEqual(new Uint8Array([1, 0, 1]));
    expect(r.outputs).toEqual([{ name: 'output0', binary: null }]);
    expect(r.binaryOutput).toBe(false);
  });

  test('nested data is flattened row-major and checked against the shape', () => {
    const r = v2.parseInferRequest(json({ inputs: [{ name: 'x', shape: [2, 3], datatype: 'FP32', data: [[1, 2, 3], [4, 5, 6]] }] }), {});
    expect(Array.from(r.inputs.x.data)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r.inputs.x.data).toBeInstanceOf(Float32Array);
  });

  test('every datatype from JSON', () => {
    const inputs = [
      ['BOOL', [true, false]], ['INT8', [-128, 127]], ['INT16', [-1, 2]], ['INT32', [-5, 7]], ['INT64', [-3, 9007199254740991]],
      ['UINT8', [0, 255]], ['UINT16', [1, 65535]], ['UINT32', [0, 4294967295]], ['UINT64', [0, 12]],
      ['FP16', [1.5, -2]], ['FP32', [0.5, 1]], ['FP64', [0.1, 2]], ['BYTES', ['hello', 'wörld']],
    ].map(([datatype, data]) => ({ name: `t_${datatype}`, shape: [2], datatype, data }));
    const r = v2.parseInferRequest(json({ inputs }), {});
    expect(r.inputs.t_INT64.data).toEqual(new BigInt64Array([-3n, 9007199254740991n]));
    expect(r.inputs.t_UINT64.data).toEqual(new BigUint64Array([0n, 12n]));
    expect(r.inputs.t_FP16.data).toEqual(new Uint16Array([0x3e00, 0xc000]));
    expect(r.inputs.t_BYTES.data).toEqual(['hello', 'wörld']);
    expect(r.inputs.t_FP64.data).toEqual(new Float64Array([0.1, 2]));
  });

  test.each([
    ['not JSON', Buffer.from('{"inputs": ['), 'not valid JSON'],
    ['a bare array', json([1, 2]), 'JSON object'],
    ['no inputs', json({ id: 'a' }), 'inputs: want a non-empty array'],
    ['empty inputs', json({ inputs: [] }), 'inputs: want a non-empty array'],
    ['id a number', json({ id: 7, inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }] }), 'id: want a string'],
    ['input not an object', json({ inputs: [3] }), 'inputs[0]: want an object'],
    ['no name', json({ inputs: [{ shape: [1], datatype: 'FP32', data: [1] }] }), 'inputs[0].name'],
    ['shape with a negative dim', json({ inputs: [{ name: 'x', shape: [-1, 2], datatype: 'FP32', data: [1, 2] }] }), "inputs[0] ('x').shape"],
    ['shape a string', json({ inputs: [{ name: 'x', shape: '2', datatype: 'FP32', data: [1, 2] }] }), "inputs[0] ('x').shape"],
    ['unknown datatype', json({ inputs: [{ name: 'x', shape: [1], datatype: 'FLOAT', data: [1] }] }), "inputs[0] ('x').datatype: \"FLOAT\""],
    ['BF16', json({ inputs: [{ name: 'x', shape: [1], datatype: 'BF16', data: [1] }] }), 'BF16 is not supported'],
    ['missing data', json({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32' }] }), "inputs[0] ('x').data: missing"],
    ['data count off', json({ inputs: [{ name: 'x', shape: [2, 2], datatype: 'FP32', data: [1, 2, 3] }] }), '3 elements, but shape [2, 2] holds 4'],
    ['nested data off the shape', json({ inputs: [{ name: 'x', shape: [2, 2], datatype: 'FP32', data: [[1, 2], [3]] }] }), "('x').data[1]: want an array of 2"],
    ['nested too deep', json({ inputs: [{ name: 'x', shape: [1, 1], datatype: 'FP32', data: [[[1]]] }] }), 'nested deeper'],
    ['a string in FP32', json({ inputs: [{ name: 'x', shape: [2], datatype: 'FP32', data: [1, 'a'] }] }), "inputs[0] ('x').data: element 1"],
    ['INT8 out of range', json({ inputs: [{ name: 'x', shape: [1], datatype: 'INT8', data: [300] }] }), "inputs[0] ('x').data: element 0"],
    ['a number in BYTES', json({ inputs: [{ name: 'x', shape: [1], datatype: 'BYTES', data: [1] }] }), "inputs[0] ('x').data: element 0"],
    ['duplicate input', json({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }, { name: 'x', shape: [1], datatype: 'FP32', data: [1] }] }),
      'given twice'],
    ['shared memory', json({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32', parameters: { shared_memory_region: 'r' } }] }), 'shared_memory_region'],
    ['binary_data_output a string', json({ parameters: { binary_data_output: 'yes' }, inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }] }),
      'parameters.binary_data_output'],
    ['outputs not an array', json({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }], outputs: { name: 'y' } }), 'outputs: want an array'],
    ['output without a name', json({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }], outputs: [{}] }), 'outputs[0].name'],
    ['output twice', json({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }], outputs: [{ name: 'y' }, { name: 'y' }] }), 'asked for twice'],
    ['classification', json({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }], outputs: [{ name: 'y', parameters: { classification: 3 } }] }),
      "outputs[0] ('y').parameters.classification"],
    ['a parameter that is an object', json({ parameters: { a: {} }, inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }] }), 'parameters.a'],
  ])('400 naming the field: %s', (_name, body, want) => {
    expect(badInput(body)).toContain(want);
  });
});

describe('parseInferRequest: binary tensor extension', () => {
  test('FP32 and INT64 after the JSON header, BYTES length-prefixed', () => {
    const f = Buffer.from(new Float32Array([1, 2, 3, 4]).buffer);
    const i = Buffer.from(new BigInt64Array([7n, -1n]).buffer);
    const s = Buffer.concat([bytesElem('ab'), bytesElem('')]);
    const { body, headers } = binaryBody({
      inputs: [
        { name: 'f', shape: [2, 2], datatype: 'FP32', parameters: { binary_data_size: 16 } },
        { name: 'i', shape: [2], datatype: 'INT64', parameters: { binary_data_size: 16 } },
        { name: 's', shape: [2], datatype: 'BYTES', parameters: { binary_data_size: s.length } },
      ],
    }, f, i, s);
    const r = v2.parseInferRequest(body, headers);
    expect(r.inputs.f.data).toEqual(new Float32Array([1, 2, 3, 4]));
    expect(r.inputs.i.data).toEqual(new BigInt64Array([7n, -1n]));
    expect(r.inputs.s.data.map(String)).toEqual(['ab', '']);
  });

  test('an odd offset is copied into an aligned array', () => {
    const f = Buffer.from(new Float32Array([5]).buffer);
    const { body, headers } = binaryBody({ inputs: [{ name: 'a', shape: [1], datatype: 'UINT8', parameters: { binary_data_size: 1 } },
      { name: 'f', shape: [1], datatype: 'FP32', parameters: { binary_data_size: 4 } }] }, Buffer.from([9]), f);
    const r = v2.parseInferRequest(body, headers);
    expect(r.inputs.f.data).toEqual(new Float32Array([5]));
    expect(r.inputs.a.data).toEqual(new Uint8Array([9]));
  });

  test.each([
    ['header not a number', { inputs: [{ name: 'x', shape: [1], datatype: 'FP32', parameters: { binary_data_size: 4 } }] }, [Buffer.alloc(4)], 'abc',
      'Inference-Header-Content-Length'],
    ['header past the body', { inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }] }, [], '100000', 'Inference-Header-Content-Length'],
    ['size past the body', { inputs: [{ name: 'x', shape: [2], datatype: 'FP32', parameters: { binary_data_size: 8 } }] }, [Buffer.alloc(4)], null,
      "inputs[0] ('x').parameters.binary_data_size: 8 bytes"],
    ['size off the shape', { inputs: [{ name: 'x', shape: [2], datatype: 'FP32', parameters: { binary_data_size: 4 } }] }, [Buffer.alloc(4)], null,
      '4 bytes, but 2 FP32 elements are 8 bytes'],
    ['bytes left over', { inputs: [{ name: 'x', shape: [1], datatype: 'FP32', parameters: { binary_data_size: 4 } }] }, [Buffer.alloc(6)], null,
      '2 bytes after the JSON are claimed by no input'],
    ['data and size both', { inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1], parameters: { binary_data_size: 4 } }] }, [Buffer.alloc(4)], null,
      'not both'],
    ['size negative', { inputs: [{ name: 'x', shape: [1], datatype: 'FP32', parameters: { binary_data_size: -4 } }] }, [Buffer.alloc(4)], null,
      'binary_data_size: want a byte count'],
    ['BYTES cut prefix', { inputs: [{ name: 'x', shape: [1], datatype: 'BYTES', parameters: { binary_data_size: 2 } }] }, [Buffer.alloc(2)], null,
      'cut length prefix'],
    ['BYTES element past the end', { inputs: [{ name: 'x', shape: [1], datatype: 'BYTES', parameters: { binary_data_size: 5 } }] },
      [Buffer.from([9, 0, 0, 0, 65])], null, 'says 9 bytes'],
    ['BYTES count off', { inputs: [{ name: 'x', shape: [2], datatype: 'BYTES', parameters: { binary_data_size: 5 } }] }, [bytesElem('a')], null,
      '1 BYTES elements'],
  ])('400: %s', (_n, doc, parts, header, want) => {
    const { body, headers } = binaryBody(doc, ...(parts as Buffer[]));
    if (header !== null) headers['inference-header-content-length'] = header as string;
    expect(badInput(body, headers)).toContain(want);
  });
});

describe('encodeInferResponse', () => {
  const outputs = {
    probs: { datatype: 'FP32', shape: [1, 2], data: new Float32Array([0.25, 0.75]) },
    ids: { datatype: 'INT64', shape: [2], data: new BigInt64Array([1n, 9007199254740993n]) },
    words: { datatype: 'BYTES', shape: [1], data: ['hi'] },
  };

  test('JSON: model_name, model_version, id, outputs with data', () => {
    const { body, headers } = v2.encodeInferResponse({ modelName: 'm', modelVersion: '1', id: '7', outputs, requested: null, binaryOutput: false });
    expect(headers).toEqual({ 'Content-Type': 'application/json' });
    const doc = JSON.parse(body.toString());
    expect(doc).toEqual({
      model_name: 'm', model_version: '1', id: '7',
      outputs: [
        { name: 'probs', datatype: 'FP32', shape: [1, 2], data: [0.25, 0.75] },
        { name: 'ids', datatype: 'INT64', shape: [2], data: [1, '9007199254740993'] },
        { name: 'words', datatype: 'BYTES', shape: [1], data: ['hi'] },
      ],
    });
  });

  test('binary_data_output with a per-output override: binary parts in output order after the JSON', () => {
    const { body, headers } = v2.encodeInferResponse({
      modelName: 'm', modelVersion: '1', outputs, requested: [{ name: 'probs', binary: null }, { name: 'ids', binary: false }, { name: 'words', binary: null }],
      binaryOutput: true,
    });
    expect(headers['Content-Type']).toBe('application/octet-stream');
    const n = Number(headers['Inference-Header-Content-Length']);
    const doc = JSON.parse(body.subarray(0, n).toString());
    expect(doc.id).toBeUndefined();
    expect(doc.outputs[0]).toEqual({ name: 'probs', datatype: 'FP32', shape: [1, 2], parameters: { binary_data_size: 8 } });
    expect(doc.outputs[1].data).toEqual([1, '9007199254740993']);
    expect(doc.outputs[2].parameters).toEqual({ binary_data_size: 6 });
    const rest = body.subarray(n);
    expect(rest.length).toBe(14);
    expect(new Float32Array(new Uint8Array(rest.subarray(0, 8)).buffer)).toEqual(new Float32Array([0.25, 0.75]));
    expect(rest.readUInt32LE(8)).toBe(2);
    expect(rest.subarray(12).toString()).toBe('hi');
  });

  test('a binary request round-trips through parse', () => {
    const { body, headers } = v2.encodeInferResponse({ modelName: 'm', modelVersion: '1', outputs, requested: null, binaryOutput: true });
    const n = Number(headers['Inference-Header-Content-Length']);
    const doc = JSON.parse(body.subarray(0, n).toString());
    const asRequest = { inputs: doc.outputs };
    const again = binaryBody(asRequest, body.subarray(n));
    const r = v2.parseInferRequest(again.body, again.headers);
    expect(r.inputs.ids.data).toEqual(outputs.ids.data);
    expect(r.inputs.probs.data).toEqual(outputs.probs.data);
    expect(r.inputs.words.data.map(String)).toEqual(['hi']);
  });
});

describe('modelMetadata and errorBody', () => {
  test('metadata from model.info', () => {
    const info = {
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'input_ids', datatype: 'INT64', shape: [-1, -1], symbols: ['batch', 'seq'] }],
      outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 2], symbols: ['batch', null] }],
    };
    expect(v2.modelMetadata(info, 'text-encoder', '3')).toEqual({
      name: 'text-encoder', versions: ['3'], platform: 'onnxruntime_onnx',
      inputs: [{ name: 'input_ids', datatype: 'INT64', shape: [-1, -1] }], outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 2] }],
    });
  });
});
