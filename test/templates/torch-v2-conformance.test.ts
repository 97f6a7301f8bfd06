/**
 * The v2 conformance corpus (test/fixtures/v2, requests as Triton's and KServe's HTTP clients send
 * them, byte for byte) against the ml-inference-torch runtime serving digits-classify's model
 * rebuilt in torch from its model.onnx: the `any` and `digits-classify` cases (the text-encoder
 * cases need that ONNX model's runtime). Prints the conformance table.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CaseResult, formatTable, loadCases, runCase } from '../fixtures/v2/cases';
import { repoRoot } from './image-layout';
import { TorchFunction, layoutTorchImage, startTorch } from './torch-helpers';

/** digits-classify's MLP in torch, its weights read from model.onnx with a minimal protobuf reader. */
const DIGITS_HANDLER = `"""digits-classify's MLP rebuilt in torch from its model.onnx (the initializers, read with a
minimal protobuf reader): the same model on the ml-inference-torch runtime, for the v2 corpus."""
import os
import struct
import torch

inputs = [{'name': 'pixels', 'datatype': 'FP32', 'shape': [-1, 64]}]
outputs = [{'name': 'probabilities'}]


def _fields(buf):
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        elif wt == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        else:
            raise ValueError(f'wire type {wt}')
        yield num, wt, v


def _varint(buf, i):
    shift = out = 0
    while True:
        b = buf[i]
        i += 1
        out |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return out, i


def initializers(path):
    model = open(path, 'rb').read()
    graph = next(v for n, wt, v in _fields(model) if n == 7)
    out = {}
    for n, wt, t in _fields(graph):
        if n != 5:
            continue
        dims, name, raw, floats = [], '', b'', []
        for f, fwt, v in _fields(t):
            if f == 1:
                dims += [x for x in _packed(v)] if fwt == 2 else [v]
            elif f == 8:
                name = v.decode()
            elif f == 9:
                raw = v
            elif f == 4:
                floats += list(struct.unpack(f'<{len(v) // 4}f', v)) if fwt == 2 else list(struct.unpack('<f', v))
        vals = list(struct.unpack(f'<{len(raw) // 4}f', raw)) if raw else floats
        out[name] = torch.tensor(vals, dtype=torch.float32).reshape(dims)
    return out


def _packed(v):
    i = 0
    while i < len(v):
        x, i = _varint(v, i)
        yield x


class Digits(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w1, self.b1, self.w2, self.b2 = w['fc1.weight'], w['fc1.bias'], w['fc2.weight'], w['fc2.bias']

    def forward(self, x):
        h = torch.relu((x / 16.0) @ self.w1.T + self.b1)
        return torch.softmax(h @ self.w2.T + self.b2, dim=1)


def load():
    return Digits(initializers(os.path.join(os.path.dirname(__file__), 'model.onnx')))
`;

const digits = path.join(repoRoot, 'functions', 'digits-classify');
const cases = loadCases().filter((c) => c.model === 'any' || c.model === 'digits-classify');

describe('ml-inference-torch: the Open Inference Protocol conformance corpus', () => {
  let t: TorchFunction;
  const rows: CaseResult[] = [];
  beforeAll(async () => {
    t = await startTorch(layoutTorchImage({
      'handler.py': DIGITS_HANDLER,
      'model.onnx': fs.readFileSync(path.join(digits, 'model.onnx')),
      'labels.json': fs.readFileSync(path.join(digits, 'labels.json')),
    }), { MLFAAS_FUNCTION_NAME: 'digits-classify' });
  }, 90_000);
  afterAll(() => {
    if (rows.length) console.log(`ml-inference-torch v2 conformance\n${formatTable(rows)}`);
    t?.stop();
  });

  test('the corpus has the cases this runtime can serve', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  test.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const r = await runCase(t.base, c, 'digits-classify');
    rows.push(r);
    expect(r.problems).toEqual([]);
  });
});
