/**
 * functions/resnet-torch (torchvision ResNet-18, random seeded weights) on the ml-inference-torch
 * runtime: both protocols answer what torch itself computes for the same input.
 */
import * as path from 'node:path';
import { repoRoot } from './image-layout';
import { TorchFunction, layoutTorchImage, pythonJson, send, startTorch } from './torch-helpers';

const N = 3 * 224 * 224;
// a deterministic, non-constant image (float32-exact values)
const image = Array.from({ length: N }, (_, i) => Math.fround(Math.sin(i * 0.001) * 0.5));
const labels: string[] = require(path.join(repoRoot, 'functions/resnet-torch/labels.json'));

describe('functions/resnet-torch', () => {
  let t: TorchFunction;
  let want: number[];
  beforeAll(async () => {
    t = await startTorch(layoutTorchImage('functions/resnet-torch'), { MLFAAS_FUNCTION_NAME: 'resnet-torch' });
    // torch's own answer: the handler's load() run directly, outside the runtime
    want = pythonJson(`
import importlib.util, json, math, torch
spec = importlib.util.spec_from_file_location('h', 'handler.py'); h = importlib.util.module_from_spec(spec); spec.loader.exec_module(h)
m = h.load().eval()
x = torch.tensor([math.sin(i * 0.001) * 0.5 for i in range(${N})], dtype=torch.float32).reshape(1, 3, 224, 224)
with torch.inference_mode():
    print(json.dumps(m(x)[0].tolist()))
`, path.join(repoRoot, 'functions/resnet-torch'));
  }, 120_000);
  afterAll(() => t?.stop());

  test('without torchvision the handler builds the same ResNet-18 architecture (parameter shapes)', () => {
    const same = pythonJson(`
import importlib.util, json
spec = importlib.util.spec_from_file_location('h', 'handler.py'); h = importlib.util.module_from_spec(spec); spec.loader.exec_module(h)
shapes = lambda m: sorted(tuple(p.shape) for p in m.parameters())
print(json.dumps(shapes(h.load()) == shapes(h._resnet18())))
`, path.join(repoRoot, 'functions/resnet-torch'));
    expect(same).toBe(true);
  });

  test('v2 metadata comes from the model', async () => {
    const meta = await (await fetch(`${t.base}/v2/models/resnet-torch`)).json();
    expect(meta).toMatchObject({
      name: 'resnet-torch',
      inputs: [{ name: 'image', datatype: 'FP32', shape: [-1, 3, 224, 224] }],
      outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 1000] }],
    });
  });

  test('v2 infer answers torch\'s logits', async () => {
    const r = await send(`${t.base}/v2/models/resnet-torch/infer`, { inputs: [{ name: 'image', shape: [1, 3, 224, 224], datatype: 'FP32', data: image }] });
    expect(r.status).toBe(200);
    const got = r.body.outputs[0].data as number[];
    expect(got).toHaveLength(1000);
    got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThan(1e-4));
  });

  test('v1 answers the argmax label (flat instance reshaped to 3x224x224)', async () => {
    const r = await send(`${t.base}/function/resnet-torch`, { instances: [image] });
    expect(r.status).toBe(200);
    const k = want.indexOf(Math.max(...want));
    expect(r.body.predictions[0]).toMatchObject({ index: k, label: labels[k] });
    expect(r.body.predictions[0].score).toBeCloseTo(want[k], 4);
  });
});

describe('the template\'s default function (faas-cli new --lang ml-inference-torch)', () => {
  test('answers v1 and v2 as created', async () => {
    const t = await startTorch(layoutTorchImage('templates/ml-inference-torch/function'));
    try {
      const v1 = await send(`${t.base}/function/my-fn`, { instances: [[1, 2, 3, 4]] });
      expect(v1.status).toBe(200);
      const scores = v1.body.predictions[0] as number[];
      expect(scores).toHaveLength(3);
      expect(scores.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
      const v2 = await send(`${t.base}/v2/models/my-fn/infer`, { inputs: [{ name: 'x', shape: [1, 4], datatype: 'FP32', data: [1, 2, 3, 4] }] });
      expect(v2.status).toBe(200);
      expect(v2.body.outputs[0]).toMatchObject({ name: 'scores', datatype: 'FP32', shape: [1, 3] });
      (v2.body.outputs[0].data as number[]).forEach((x, i) => expect(x).toBeCloseTo(scores[i], 6));
    } finally {
      t.stop();
    }
  }, 90_000);
});
