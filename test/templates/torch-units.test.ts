/**
 * Pure parts of the ml-inference-torch runtime, table-driven through one Python process each:
 * Go durations (read_timeout / write_timeout / exec_timeout), the tokend wire records (byte for
 * byte the layout of native/include/tokend_proto.h), the v2 datatype codecs.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from './image-layout';
import { TORCH_PYTHON } from './torch-helpers';

const runtime = path.join(repoRoot, 'templates', 'ml-inference-torch');

/** Run `code` with the runtime's modules importable; its stdout as JSON. */
function py(code: string): any {
  const env = { PYTHONDONTWRITEBYTECODE: '1', PATH: process.env.PATH ?? '' };
  const r = spawnSync(TORCH_PYTHON, ['-c', code], { cwd: runtime, encoding: 'utf8', timeout: 60_000, env });
  if (r.status !== 0) throw new Error(`python failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe('Go durations', () => {
  const table = [
    { raw: '10s', want: 10_000 }, { raw: '1m30s', want: 90_000 }, { raw: '500ms', want: 500 }, { raw: '1.5h', want: 5_400_000 },
    { raw: '2', want: 2000 }, { raw: '0', want: 0 }, { raw: '250us', want: 0.25 }, { raw: '1h2m3s4ms', want: 3_723_004 }, { raw: '', want: null },
    { raw: '10 s', want: 'error' }, { raw: 's', want: 'error' }, { raw: '5d', want: 'error' }, { raw: '-1s', want: 'error' }, { raw: '1s2', want: 'error' },
  ];
  const got = py(`
import json
from config import go_duration_ms, ConfigError
out = []
for raw in ${JSON.stringify(table.map((t) => t.raw))}:
    try:
        out.append(go_duration_ms('exec_timeout', raw))
    except ConfigError as e:
        out.append('error' if 'exec_timeout=' in str(e) and 'Go duration' in str(e) else str(e))
print(json.dumps(out))`);
  test.each(table.map((t, i) => ({ ...t, i })))('$raw -> $want', ({ i, want }) => {
    expect(got[i]).toEqual(want);
  });
});

describe('X-Timeout shortens exec_timeout for one request', () => {
  const table = [
    { exec: 1000, header: '200ms', want: 200 }, { exec: 1000, header: '5s', want: 1000 }, { exec: 1000, header: 'soon', want: 1000 },
    { exec: 1000, header: '', want: 1000 }, { exec: 0, header: '200ms', want: 0 }, { exec: 1000, header: '0s', want: 1000 },
  ];
  const got = py(`
import json
from server import request_exec_ms
print(json.dumps([request_exec_ms(e, h) for e, h in ${JSON.stringify(table.map((t) => [t.exec, t.header]))}]))`);
  test.each(table.map((t, i) => ({ ...t, i })))('exec $exec, X-Timeout "$header" -> $want', ({ i, want }) => {
    expect(got[i]).toEqual(want);
  });
});

describe('tokend wire records', () => {
  test('ACQUIRE: the 56-byte layout of struct tokend_msg, little-endian, values clamped to u64', () => {
    const hex = py(`
import json, tokens
m = tokens.encode(tokens.ACQUIRE, tokens.DEVICE_CPU, tokens.F_BLOCKED, 5, (1 << 64) + 7, 3, -4)
print(json.dumps([m.hex(), tokens.decode(m)]))`);
    const want = Buffer.alloc(56);
    want.writeUInt32LE(0x444e4b54, 0); // TOKEND_MAGIC
    want.writeUInt16LE(1, 4); // version
    want.writeUInt16LE(3, 6); // ACQUIRE
    want.writeUInt32LE(0xffff, 8); // TOKEND_DEVICE_CPU
    want.writeUInt32LE(2, 12); // TOKEND_F_BLOCKED
    want.writeBigUInt64LE(5n, 16);
    want.writeBigUInt64LE((1n << 64n) - 1n, 24);
    want.writeBigUInt64LE(3n, 32);
    want.writeBigUInt64LE(0n, 40);
    expect(hex[0]).toBe(want.toString('hex'));
    expect(hex[1]).toMatchObject({ magic: 0x444e4b54, version: 1, type: 3, device: 0xffff, flags: 2, a: 5, c: 3, d: 0 });
  });
});

describe('v2 datatype codecs', () => {
  const cases = py(`
import json, numpy as np, dtypes
out = {}
def attempt(name, f):
    try:
        out[name] = f()
    except ValueError as e:
        out[name] = 'error: ' + str(e)
attempt('fp16-json', lambda: dtypes.json_data(dtypes.from_json([[1.5, -2], [0.1, 65504]], 'FP16', [2, 2], 'x'), 'FP16'))
attempt('int8-range', lambda: dtypes.from_json([1, 200], 'INT8', [2], "input 'x'").tolist())
attempt('uint64-big', lambda: dtypes.to_tensor(np.array([2**63], dtype=np.uint64), 'UINT64').tolist())
attempt('uint32-widened', lambda: str(dtypes.to_tensor(np.array([4000000000], dtype=np.uint32), 'UINT32').dtype))
attempt('bool-bad', lambda: dtypes.from_json([1, 2], 'BOOL', [2], "input 'b'").tolist())
attempt('bytes-roundtrip', lambda: [b.decode() for b in dtypes.from_bytes(dtypes.to_bytes(np.array([b'ab', b''], dtype=object), 'BYTES'), 'BYTES', [2], 'x')])
attempt('fp32-binary-size', lambda: dtypes.from_bytes(b'\\0' * 7, 'FP32', [2], "input 'x'").tolist())
attempt('int64-binary', lambda: dtypes.from_bytes(np.array([-1, 2**40], dtype='<i8').tobytes(), 'INT64', [2], 'x').tolist())
print(json.dumps(out))`);
  test.each([
    { name: 'fp16-json', want: [1.5, -2, 0.0999755859375, 65504] },
    { name: 'int8-range', want: "error: input 'x': a value is outside INT8's range [-128, 127]" },
    { name: 'uint64-big', want: 'error: a UINT64 value is over 2^63-1, which torch cannot hold' },
    { name: 'uint32-widened', want: 'torch.int64' },
    { name: 'bool-bad', want: "error: input 'b': BOOL data must be true/false" },
    { name: 'bytes-roundtrip', want: ['ab', ''] },
    { name: 'fp32-binary-size', want: "error: input 'x': binary_data_size 7 != 2 x 4 bytes for shape [2]" },
    { name: 'int64-binary', want: [-1, 2 ** 40] },
  ])('$name', ({ name, want }) => {
    expect(cases[name]).toEqual(want);
  });
});
