/**
 * Bad v2 input never makes the runtime fail (issue 25, "0 5xx, 0 hangs, every 4xx JSON naming the
 * field"): seeded mutations of the conformance corpus' infer requests (values of the wrong type,
 * shapes off, fields missing, bytes flipped or cut, header lengths off) sent to a real runtime for
 * each example model. Every answer must come, be below 500, and a 4xx must be {"error": string}.
 */
import { caseBody, loadCases, sendRaw, V2Case } from '../fixtures/v2/cases';
import { FunctionProcess, freePort, layoutImage, removeImage, startFunction, waitFor200 } from './image-layout';

const MODELS = ['digits-classify', 'text-encoder'];
const PER_MODEL = Number(process.env.V2_FUZZ_N || 400);

/** mulberry32: a small seeded generator, so a failure can be replayed */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WEIRD: unknown[] = [null, true, -1, 0, 1e308, -1e308, 2 ** 64, 'x', '', '9999999999999999999999', [], [[]], {}, { a: 1 }, [1, 'a'], [null], 1.5, -0.5];

function mutateDoc(doc: any, r: () => number): any {
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  const d = JSON.parse(JSON.stringify(doc));
  const input: any = Array.isArray(d.inputs) && d.inputs.length > 0 ? pick(d.inputs) : null;
  switch (Math.floor(r() * 12)) {
    case 0: d.inputs = pick(WEIRD); break;
    case 1: if (input) input.shape = pick(WEIRD); break;
    case 2: if (input) input.datatype = pick(['FP32', 'INT64', 'BOOL', 'BYTES', 'FP16', 'UINT8', 'BF16', 'fp32', 7, null]); break;
    case 3: if (input) input.data = pick(WEIRD); break;
    case 4: if (input && Array.isArray(input.data) && input.data.length > 0) input.data[Math.floor(r() * input.data.length)] = pick(WEIRD); break;
    case 5: if (input) input.name = pick(WEIRD.concat(['nosuch', 'pixels', 'input_ids'])); break;
    case 6: if (input && Array.isArray(input.shape)) input.shape = input.shape.map((x: number) => (r() < 0.5 ? x + 1 : x)); break;
    case 7: d.outputs = pick(WEIRD.concat([[{ name: 'nosuch' }], [{ name: 'probabilities', parameters: { binary_data: 'yes' } }]])); break;
    case 8: d.parameters = pick(WEIRD.concat([{ binary_data_output: 1 }, { shared_memory_region: 'r' }])); break;
    case 9: if (input) input.parameters = pick(WEIRD.concat([{ binary_data_size: -1 }, { binary_data_size: 1e12 }, { binary_data_size: 3 }])); break;
    case 10: d.id = pick(WEIRD); break;
    default: if (Array.isArray(d.inputs)) d.inputs.push(JSON.parse(JSON.stringify(input ?? {}))); break;
  }
  return d;
}

function mutate(c: V2Case, r: () => number): { headers: Record<string, string>; body: Buffer } {
  const body = caseBody(c)!;
  const headers = { ...c.request.headers };
  const hl = Object.keys(headers).find((k) => k.toLowerCase() === 'inference-header-content-length');
  const n = hl ? Number(headers[hl]) : body.length;
  const roll = r();
  if (roll < 0.15) { // flip bytes anywhere
    const b = Buffer.from(body);
    for (let i = 0; i < 3; i++) b[Math.floor(r() * b.length)] = Math.floor(r() * 256);
    return { headers, body: b };
  }
  if (roll < 0.25) return { headers, body: body.subarray(0, Math.floor(r() * body.length)) }; // cut
  if (roll < 0.32 && hl) return { headers: { ...headers, [hl]: String(Math.floor(r() * (body.length + 20)) - 5) }, body }; // header off
  const doc = mutateDoc(JSON.parse(body.subarray(0, n).toString('utf8')), r);
  const head = Buffer.from(JSON.stringify(doc));
  return { headers: hl ? { ...headers, [hl]: String(head.length) } : headers, body: Buffer.concat([head, body.subarray(n)]) };
}

/** What is wrong with an answer to bad input, or null. */
function judge(status: number, body: Buffer): string | null {
  const text = body.toString().slice(0, 200);
  if (status >= 500) return `${status} ${text}`;
  if (status < 400) return null;
  let doc: any = null;
  try {
    doc = JSON.parse(body.toString());
  } catch { /* below */ }
  return doc && typeof doc.error === 'string' && doc.error !== '' ? null : `${status} without {"error"}: ${text}`;
}

test('judge flags a 5xx and a 4xx without {"error"}', () => {
  expect(judge(500, Buffer.from('{"error":"x"}'))).toContain('500');
  expect(judge(400, Buffer.from('{"error":{"code":"bad_input"}}'))).toContain('without');
  expect(judge(400, Buffer.from('oops'))).toContain('without');
  expect(judge(400, Buffer.from('{"error":"inputs[0].shape: ..."}'))).toBeNull();
  expect(judge(200, Buffer.from('{}'))).toBeNull();
});

describe('mutated v2 requests: no 5xx, no hang, 4xx {"error"}', () => {
  const servers: Record<string, { fn: FunctionProcess; dir: string; base: string }> = {};
  beforeAll(async () => {
    await Promise.all(MODELS.map(async (m) => {
      const dir = layoutImage('ml-inference', `functions/${m}`, ['data']);
      const port = await freePort();
      const fn = startFunction(dir, { PORT: String(port), MAX_BATCH_SIZE: '8' });
      servers[m] = { fn, dir, base: `http://127.0.0.1:${port}` };
      await waitFor200(`http://127.0.0.1:${port}/_/ready`, 30_000);
    }));
  }, 60_000);
  afterAll(() => {
    for (const s of Object.values(servers)) {
      s.fn.kill();
      removeImage(s.dir);
    }
  });

  test.each(MODELS)('%s', async (m) => {
    const seeds = loadCases().filter((c) => c.model === m && c.expect.status === 200 && c.request.method === 'POST'
      && !c.request.headers['Content-Encoding']);
    expect(seeds.length).toBeGreaterThan(0);
    const r = rng(Number(process.env.V2_FUZZ_SEED || 1) * 7919 + m.length);
    const failures: string[] = [];
    const statuses: Record<number, number> = {};
    for (let i = 0; i < PER_MODEL && failures.length < 5; i++) {
      const c = seeds[Math.floor(r() * seeds.length)];
      const { headers, body } = mutate(c, r);
      let reply;
      try {
        reply = await sendRaw(servers[m].base, 'POST', c.request.path.replace('{model}', m), headers, body, 10_000);
      } catch (err) {
        failures.push(`#${i} from ${c.name}: ${err} (body ${body.subarray(0, 200).toString()})`);
        continue;
      }
      statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
      const problem = judge(reply.status, reply.body);
      if (problem) failures.push(`#${i} from ${c.name}: ${problem} for ${body.subarray(0, 300).toString()}`);
    }
    // eslint-disable-next-line no-console
    console.log(`${m}: ${PER_MODEL} mutated requests, statuses ${JSON.stringify(statuses)}`);
    expect(failures).toEqual([]);
    expect(Object.keys(statuses).some((s) => Number(s) >= 400)).toBe(true); // the mutations do hit errors
    expect((await sendRaw(servers[m].base, 'GET', '/v2/health/ready', {})).status).toBe(200);
  }, 120_000);
});
