/**
 * functions/text-encoder on the ml-inference runtime (issue 25, part 2): a transformer encoder
 * with three int64 [batch, seq] inputs, served from a laid-out image; text in through the
 * handler's tokenizer, answers that mean something (the model was trained on a synthetic
 * sentiment task, functions/text-encoder/export.py).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FunctionProcess, freePort, getJson, layoutImage, post, removeImage, repoRoot, startFunction, waitFor200 } from './image-layout';

const dirOf = path.join(repoRoot, 'functions', 'text-encoder');

describe('text-encoder on ml-inference', () => {
  let fn: FunctionProcess;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    dir = layoutImage('ml-inference', 'functions/text-encoder');
    const port = await freePort();
    fn = startFunction(dir, { PORT: String(port), MAX_BATCH_SIZE: '8', ORT_INTRA_OP_THREADS: '1' });
    base = `http://127.0.0.1:${port}`;
    await waitFor200(`${base}/_/ready`, 30_000);
  });
  afterAll(() => {
    fn.kill();
    removeImage(dir);
  });

  test('the runtime describes three int64 inputs with dynamic batch and seq axes', async () => {
    const ready = fn.json().find((l) => l.type === 'ready');
    expect(ready).toMatchObject({ input: 'input_ids', maxBatchSize: 8, handler: true });
    const info = await getJson(base);
    expect(info.ready).toBe(true);
  });

  test.each([
    ['i really loved this film, the acting was excellent', 'positive'],
    ['the plot was boring and the music was terrible', 'negative'],
    ['the movie was not good', 'negative'],
    ["it wasn't bad at all", 'positive'],
    ['the film is at the place', 'neutral'],
  ])('"%s" is %s', async (text, label) => {
    const r = await post(`${base}/function/text-encoder`, { text });
    expect(r.status).toBe(200);
    expect(r.body.predictions).toHaveLength(1);
    expect(r.body.predictions[0].label).toBe(label);
    expect(r.body.predictions[0].score).toBeGreaterThan(0.5);
  });

  test('several texts of different lengths in one request are answered in order', async () => {
    const texts = ['great', 'the service was awful and the food was bad, i hate this place, the worst', 'nice', 'dull'];
    const r = await post(base, { instances: texts });
    expect(r.status).toBe(200);
    expect(r.body.predictions.map((p: any) => p.label)).toEqual(['positive', 'negative', 'positive', 'negative']);
  });

  test('the README examples: a pre-tokenized v1 instance, and the v1 body file', async () => {
    const v1 = JSON.parse(fs.readFileSync(path.join(dirOf, 'v1-request.json'), 'utf8'));
    const r1 = await post(base, v1);
    expect(r1.status).toBe(200);
    expect(r1.body.predictions.map((p: any) => p.label)).toEqual(['positive', 'negative']);
    expect(r1.body.predictions[1].tokens).toBe(10);
    const r2 = await post(base, { instances: [{ input_ids: [2, 31, 36, 56, 37], attention_mask: [1, 1, 1, 1, 1] }] });
    expect(r2.status).toBe(200);
    expect(r2.body.predictions[0].label).toBe('positive');
  });

  test('padding past the mask does not change the answer (so the handler may pad to buckets)', async () => {
    const ids = [2, 54, 43, 59, 41, 25];
    const padded = (len: number) => ({
      input_ids: [...ids, ...Array(len - ids.length).fill(0)],
      attention_mask: [...ids.map(() => 1), ...Array(len - ids.length).fill(0)],
    });
    const r = await post(base, { instances: [padded(6), padded(8), padded(16), padded(64)] });
    expect(r.status).toBe(200);
    const scores = r.body.predictions.map((p: any) => p.scores.negative);
    for (const s of scores) expect(Math.abs(s - scores[0])).toBeLessThan(1e-3);
    expect(r.body.predictions[0].label).toBe('negative');
  });

  test.each([
    ['text that is not a string', { text: 5 }, /"text" must be a string/],
    ['a token list with a mask of another length', { instances: [{ input_ids: [2, 3, 4], attention_mask: [1, 1] }] }, /attention_mask/],
    ['a token id that is not an integer', { instances: [{ input_ids: [2, 'x'] }] }, /input_ids/],
  ])('400 for %s', async (_n, body, message) => {
    const r = await post(base, body);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(message);
  });

  test('ids past the vocabulary and sequences past 64 are answered (the model clamps them)', async () => {
    const r = await post(base, { instances: [{ input_ids: Array.from({ length: 100 }, (_, i) => i * 1000) }] });
    expect(r.status).toBe(200);
  });
});

describe('text-encoder with an absolute MODEL_PATH (a model outside function/, as from the node model cache)', () => {
  test('loads and answers', async () => {
    const dir = layoutImage('ml-inference', 'functions/text-encoder', ['model.onnx']);
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'mlfaas-model-cache-'));
    fs.copyFileSync(path.join(dirOf, 'model.onnx'), path.join(cache, 'v1.onnx'));
    const port = await freePort();
    const fn = startFunction(dir, { PORT: String(port), MODEL_PATH: path.join(cache, 'v1.onnx'), ORT_INTRA_OP_THREADS: '1' });
    try {
      expect(fs.existsSync(path.join(dir, 'function', 'model.onnx'))).toBe(false);
      await waitFor200(`http://127.0.0.1:${port}/_/ready`, 30_000);
      const r = await post(`http://127.0.0.1:${port}`, { text: 'great' });
      expect(r.status).toBe(200);
      expect(r.body.predictions[0].label).toBe('positive');
    } finally {
      fn.kill();
      removeImage(dir);
      fs.rmSync(cache, { recursive: true, force: true });
    }
  });
});
