/**
 * The collector's spots for replicas nobody planned, over a fake provider and a real Redis: the
 * node's least occupied device counting every function's replicas, and batch 1.
 */
import type Redis from 'ioredis';
import { Collector } from '../../../autoscaler/live/collector';
import { PlacementBook } from '../../../gateway/registry/placements';
import type { FunctionProvider, FunctionStatus } from '../../../gateway/providers/function-provider';
import { connectRedis } from '../../../gateway/lib/redis-server';
import { testRedis } from '../../helpers/platform';

const status = (name: string): FunctionStatus => ({ name, namespace: 'openfaas-fn', image: 'x', labels: {}, annotations: { 'mlfaas.batch.max': '8' },
  replicas: 1, availableReplicas: 1, createdAt: '', kind: 'inference' });
const endpoint = (id: string, quota: number) => ({ id, url: 'http://127.0.0.1:1', state: 'ready', agent: 'a', startedAt: '', restarts: 0, weight: 1, quota });

describe('collector', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let client: Redis;
  beforeAll(async () => {
    redis = await testRedis();
    client = connectRedis(redis.url);
  });
  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  it("a woken function's replica goes to the core no other function uses, at batch 1", async () => {
    // 'digits' already runs on cpu0 at quota 0.1 (booked earlier); 'image' was just woken: listed
    // first, so a per-function choice would have seen an empty node and taken cpu0 as well
    const eps: Record<string, ReturnType<typeof endpoint>[]> = { image: [endpoint('i1', 1)], digits: [endpoint('d1', 0.1)] };
    const provider = {
      list: async () => [status('image'), status('digits')],
      endpoints: async (r: { name: string }) => eps[r.name],
    } as unknown as FunctionProvider;
    await new PlacementBook(client).write({ name: 'digits', namespace: 'openfaas-fn' }, 'd1', { gpu: 'cpu0', smShare: 1, batchSize: 16 });
    const { items, cluster } = await new Collector(client, provider, ['cpu0', 'cpu1'], new Map()).collect(Date.now());
    const image = items.find((x) => x.ref.name === 'image')!.replicas[0];
    expect(image).toMatchObject({ id: 'i1', gpu: 'cpu1', smShare: 1, batchSize: 1, quota: 1 });
    expect(items.find((x) => x.ref.name === 'digits')!.replicas[0]).toMatchObject({ gpu: 'cpu0', batchSize: 16 });
    expect(cluster.gpus.map((g) => g.id).sort()).toEqual(['cpu0', 'cpu1']);
    // and it is booked: the next tick reads the same spot
    expect((await new PlacementBook(client).read({ name: 'image', namespace: 'openfaas-fn' })).i1).toEqual({ gpu: 'cpu1', smShare: 1, batchSize: 1 });
  });
});
