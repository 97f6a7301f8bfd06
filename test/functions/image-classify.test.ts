import {
  FunctionProcess, freePort, layoutImage, post, removeImage, startFunction, waitFor200,
} from '../templates/image-layout';

describe('image-classify (MobileNetV2, random weights) served by ml-inference', () => {
  let fn: FunctionProcess;
  let base: string;
  let dir: string;
  beforeAll(async () => {
    dir = layoutImage('ml-inference', 'functions/image-classify');
    const port = await freePort();
    fn = startFunction(dir, { PORT: String(port), MAX_BATCH_SIZE: '4' });
    base = `http://127.0.0.1:${port}`;
    await waitFor200(`${base}/_/ready`, 30_000);
  });
  afterAll(() => {
    fn.kill();
    removeImage(dir);
  });

  test('reads the input shape from the model', () => {
    expect(fn.json().find((l) => l.type === 'ready')).toMatchObject({ input: 'image', shape: ['batch', 3, 224, 224], outputs: ['logits'] });
  });

  test('{"random": n} synthesises n images and answers n predictions', async () => {
    const r = await post(base, { random: 3 });
    expect(r.status).toBe(200);
    expect(r.body.predictions).toHaveLength(3);
    for (const p of r.body.predictions) {
      expect(p.label).toMatch(/^class-\d+$/);
      expect(p.index).toBeGreaterThanOrEqual(0);
      expect(p.index).toBeLessThan(1000);
    }
    expect(Number(r.headers.get('x-batch-size'))).toBe(3);
    expect(Number(r.headers.get('x-batch-latency-ms'))).toBeGreaterThan(0);
  });

  test('a flat 150528-number instance is accepted', async () => {
    const r = await post(base, { instances: [new Array(3 * 224 * 224).fill(0.5)] });
    expect(r.status).toBe(200);
    expect(r.body.predictions).toHaveLength(1);
  });

  test.each([
    { name: 'a 64-number instance', body: { instances: [new Array(64).fill(0)] }, want: /takes 150528 numbers \(shape \[3, 224, 224\]\)/ },
    { name: 'random: 0', body: { random: 0 }, want: /"random" must be an integer in \[1, 64\]/ },
    { name: 'random: 1000', body: { random: 1000 }, want: /"random" must be an integer/ },
  ])('400 for $name', async ({ body, want }) => {
    const r = await post(base, body);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(want);
  });
});
