/**
 * templates/ml-inference/dtypes.js: the one mapping between the Open Inference Protocol's datatypes
 * and onnxruntime's, and the JSON forms of each (issue 25).
 */
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const dtypes = require(path.join(__dirname, '..', '..', 'templates', 'ml-inference', 'dtypes.js'));

describe('dtypes', () => {
  test('every protocol datatype maps to an onnxruntime type and back', () => {
    expect(dtypes.DATATYPES).toHaveLength(13);
    for (const d of dtypes.DATATYPES) expect(dtypes.fromOrt(dtypes.toOrt(d))).toBe(d);
    expect(dtypes.toOrt('FP16')).toBe('float16');
    expect(dtypes.toOrt('BYTES')).toBe('string');
    expect(dtypes.fromOrt('bfloat16')).toBeNull();
    expect(() => dtypes.toOrt('FLOAT')).toThrow(/unknown datatype 'FLOAT'/);
    expect(['INT64', 'FP16', 'BOOL', 'BYTES'].map(dtypes.bytesPerElement)).toEqual([8, 2, 1, 0]);
  });

  test('arrays per datatype', () => {
    const tag = (x: unknown) => Object.prototype.toString.call(x);
    expect(tag(dtypes.arrayFor('INT64', 2))).toBe('[object BigInt64Array]');
    expect(tag(dtypes.arrayFor('UINT64', 2))).toBe('[object BigUint64Array]');
    expect(tag(dtypes.arrayFor('FP16', 2))).toBe('[object Uint16Array]');
    expect(tag(dtypes.arrayFor('BOOL', 2))).toBe('[object Uint8Array]');
    expect(dtypes.arrayFor('BYTES', 2)).toEqual(['', '']);
    expect(dtypes.isArrayFor('BOOL', Buffer.from([1, 0]))).toBe(true);
    expect(dtypes.isArrayFor('INT32', new Float32Array(1))).toBe(false);
    expect(dtypes.isArrayFor('BYTES', ['a', Buffer.from('b')])).toBe(true);
    expect(dtypes.isArrayFor('BYTES', ['a', 1])).toBe(false);
  });

  test('half precision: exact values, round to nearest even, overflow, subnormals, NaN', () => {
    const cases: Array<[number, number]> = [[0, 0], [1, 0x3c00], [-2, 0xc000], [65504, 0x7bff], [1e6, 0x7c00], [-1e6, 0xfc00],
      [2 ** -24, 0x0001], [2 ** -14, 0x0400], [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02], [2 ** -26, 0]];
    for (const [v, h] of cases) expect([v, dtypes.toHalf(v)]).toEqual([v, h]);
    expect(dtypes.toHalf(NaN) & 0x7c00).toBe(0x7c00);
    for (const h of [0x0001, 0x03ff, 0x0400, 0x3555, 0x7bff, 0xc000]) expect(dtypes.toHalf(dtypes.fromHalf(h))).toBe(h);
    expect(dtypes.fromHalf(0x7c00)).toBe(Infinity);
    expect(Number.isNaN(dtypes.fromHalf(0x7e00))).toBe(true);
  });

  test('JSON values in: ranges, 64-bit integers as numbers or decimal strings, booleans', () => {
    expect(Array.from(dtypes.fromJson('INT64', [1, '-9223372036854775808']))).toEqual([1n, -(2n ** 63n)]);
    expect(Array.from(dtypes.fromJson('UINT64', ['18446744073709551615']))).toEqual([2n ** 64n - 1n]);
    expect(Array.from(dtypes.fromJson('BOOL', [true, false, 1, 0]))).toEqual([1, 0, 1, 0]);
    expect(Array.from(dtypes.fromJson('FP16', [1, 0.5]))).toEqual([0x3c00, 0x3800]);
    expect(() => dtypes.fromJson('UINT8', [1, 256])).toThrow(/element 1 is 256; UINT8 takes integers in \[0, 255\]/);
    expect(() => dtypes.fromJson('INT8', [-129])).toThrow(/element 0/);
    expect(() => dtypes.fromJson('INT32', [1.5])).toThrow(/element 0 is 1.5/);
    expect(() => dtypes.fromJson('INT64', [2 ** 60])).toThrow(/decimal strings past 2\^53/);
    expect(() => dtypes.fromJson('INT64', ['9223372036854775808'])).toThrow(/out of INT64's range/);
    expect(() => dtypes.fromJson('UINT64', [-1])).toThrow(/out of UINT64's range/);
    expect(() => dtypes.fromJson('FP32', [null])).toThrow(/element 0 is null; FP32 takes finite numbers/);
    expect(() => dtypes.fromJson('FP32', ['1'])).toThrow(/the string "1"/);
    expect(() => dtypes.fromJson('BOOL', [2])).toThrow(/BOOL takes true\/false/);
    expect(() => dtypes.fromJson('BYTES', [1])).toThrow(/BYTES takes strings/);
  });

  test('JSON values out: 64-bit integers past 2^53 as strings, halves as numbers, BOOL as booleans, BYTES as text', () => {
    expect(dtypes.toJson('INT64', new BigInt64Array([5n, 2n ** 60n]))).toEqual([5, String(2n ** 60n)]);
    expect(dtypes.toJson('FP16', new Uint16Array([0x3c00, 0xc000]))).toEqual([1, -2]);
    expect(dtypes.toJson('BOOL', new Uint8Array([1, 0]))).toEqual([true, false]);
    expect(dtypes.toJson('BYTES', [Buffer.from('hé'), 'x'])).toEqual(['hé', 'x']);
    expect(dtypes.toJson('INT8', new Int8Array([-3]))).toEqual([-3]);
    expect(JSON.stringify(dtypes.toJson('UINT64', new BigUint64Array([2n ** 64n - 1n])))).toBe('["18446744073709551615"]');
  });

  test('FP32 out: the shortest decimal that reads back as the same float32', () => {
    const f = new Float32Array([0.9793116450309753, 0.1, -0.015625, 1 / 3, 3, 0, 1e-45, 3.4028234663852886e38, -2.5e-9, 123456.7]);
    expect(JSON.stringify(dtypes.toJson('FP32', f))).toBe('[0.97931165,0.1,-0.015625,0.33333334,3,0,1e-45,3.4028235e+38,-2.5e-9,123456.7]');
    expect(JSON.stringify(dtypes.toJson('FP64', new Float64Array([0.1 + 0.2])))).toBe('[0.30000000000000004]'); // doubles as they are
    // seeded pseudo-random bit patterns over every exponent: each reads back, and no toPrecision(p) with fewer digits does
    const bits = new Uint32Array(5000);
    let x = 12345;
    for (let i = 0; i < bits.length; i++) bits[i] = x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const all = Array.from(new Float32Array(bits.buffer)).filter(Number.isFinite);
    const out = dtypes.toJson('FP32', new Float32Array(all));
    const digits = (n: number) => n.toExponential().replace(/e.*$/, '').replace(/[-.]/g, '').length;
    let wrong = 0;
    let longer = 0;
    all.forEach((v, i) => {
      if (Math.fround(out[i]) !== v) wrong += 1;
      for (let p = 1; p < digits(out[i]); p++) if (Math.fround(Number(v.toPrecision(p))) === v) longer += 1;
    });
    expect({ wrong, longer }).toEqual({ wrong: 0, longer: 0 });
  });

  test('FP16 out: every half as the shortest decimal that reads back as the same half', () => {
    const halves = new Uint16Array(65536).map((_, i) => i);
    const out = dtypes.toJson('FP16', halves);
    let wrong = 0;
    for (let h = 0; h < 65536; h++) {
      const v = dtypes.fromHalf(h);
      if (Number.isNaN(v)) continue;
      const back = dtypes.toHalf(out[h]);
      if (back !== h && !(v === 0 && out[h] === 0)) wrong += 1;
    }
    expect(wrong).toBe(0);
    expect(dtypes.toJson('FP16', new Uint16Array([0x3555, 0x2e66, 0x7bff]))).toEqual([0.3333, 0.1, 65500]); // 65500 reads back as the largest half, 65504
  });
});
