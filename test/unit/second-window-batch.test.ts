/**
 * Issue 26: the per-second window counts the answers carrying X-Batch-Size and Σ 1/X-Batch-Size
 * (batch executions), so /system/overview's batchMean covers every gateway; a header that is not
 * a batch size (absent, not a number, below 1) counts nothing. A real Redis.
 */
import { connectRedis } from '../../gateway/lib/redis-server';
import { readSeconds, SecondWindow } from '../../gateway/metrics/second-window';
import { testRedis } from '../helpers/platform';

jest.setTimeout(60_000);

describe('SecondWindow: batch sizes', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let client: ReturnType<typeof connectRedis>;
  beforeAll(async () => {
    redis = await testRedis();
    client = connectRedis(redis.url);
  });
  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  it('adds 1 and 1/b per answer with a batch size b ≥ 1; ignores anything else', async () => {
    const ref = { name: 'f', namespace: 'openfaas-fn' };
    const w = new SecondWindow(client);
    for (const h of ['4', ['2'], '4', undefined, 'abc', '0', '-2', '', 'Infinity']) w.batchAnswer(ref, h);
    w.arrival(ref);
    const at = 1_790_000_000_000;
    await w.flush(at);
    const s = (await readSeconds(client, ref, at / 1000, at / 1000)).get(at / 1000)!;
    expect(s.batched).toBe(3);
    expect(s.batchExecs).toBeCloseTo(0.25 + 0.5 + 0.25, 9);
    // a second (and function) without batched answers has neither field
    const other = { name: 'g', namespace: 'openfaas-fn' };
    w.arrival(other);
    await w.flush(at + 1000);
    const g = (await readSeconds(client, other, at / 1000 + 1, at / 1000 + 1)).get(at / 1000 + 1)!;
    expect(g.arrivals).toBe(1);
    expect(g).not.toHaveProperty('batched');
  });
});
