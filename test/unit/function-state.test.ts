import { FunctionState } from '../../gateway/proxy/function-state';
import { pickUpstream, Upstream } from '../../gateway/proxy/balancer';
import { ReplicaInfo } from '../../gateway/registry/registry';

const replica = (id: string, port: number, over: Partial<ReplicaInfo> = {}): ReplicaInfo => ({
  id,
  url: `http://127.0.0.1:${port}`,
  state: 'ready',
  agent: 'a',
  startedAt: '2026-01-01T00:00:00Z',
  restarts: 0,
  weight: 1,
  quota: 1,
  ...over,
});

describe('pickUpstream', () => {
  const u = (id: string, outstanding: number, weight = 1): Upstream => ({ id, host: 'h', port: 1, weight, outstanding });
  test.each([
    { name: 'least outstanding wins', ups: [u('a', 2), u('b', 1)], max: 10, want: 'b' },
    { name: 'ties go to the first', ups: [u('a', 1), u('b', 1)], max: 10, want: 'a' },
    { name: 'weight scales the score', ups: [u('a', 2, 3), u('b', 1, 1)], max: 10, want: 'a' },
    { name: 'none below max', ups: [u('a', 1), u('b', 1)], max: 1, want: undefined },
    { name: 'no replicas', ups: [], max: 1, want: undefined },
    { name: 'a replica marked down is passed over', ups: [{ ...u('a', 0), downUntil: 2000 }, u('b', 5)], max: 10, want: 'b' },
    { name: 'a mark that has expired is not', ups: [{ ...u('a', 0), downUntil: 500 }, u('b', 5)], max: 10, want: 'a' },
    { name: 'all marked down: tried anyway', ups: [{ ...u('a', 0), downUntil: 2000 }, { ...u('b', 1), downUntil: 2000 }], max: 10, want: 'a' },
    { name: 'the others full: the marked one is tried', ups: [{ ...u('a', 0), downUntil: 2000 }, u('b', 10)], max: 10, want: 'a' },
  ])('$name', ({ ups, max, want }) => {
    expect(pickUpstream(ups, max, 1000)?.id).toBe(want);
  });
});

describe('FunctionState', () => {
  it('frees the slot of a request that was in flight across a replica-set refresh', async () => {
    const s = new FunctionState({ name: 'f', namespace: 'ns' }, 1, 5);
    s.setReplicas([replica('r1', 1000)], 1);
    const first = await s.acquire(1000);
    const queued = s.acquire(1000);
    s.setReplicas([replica('r1', 1000, { weight: 2 })], 1); // refresh while `first` is in flight
    expect(s.upstreams[0]).toBe(first);
    expect(s.upstreams[0].weight).toBe(2);
    s.release(first);
    await expect(queued).resolves.toBe(first);
    expect(s.inflight).toBe(1);
  });

  it('drops the tail with a queue_full error carrying Retry-After', async () => {
    const s = new FunctionState({ name: 'f', namespace: 'ns' }, 1, 1);
    s.setReplicas([replica('r1', 1000)], 1);
    await s.acquire(1000);
    const waiting = s.acquire(1000);
    await expect(s.acquire(1000)).rejects.toMatchObject({ code: 'queue_full', headers: { 'Retry-After': '1' } });
    s.rejectAll(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
  });

  it('times out a queued request with no_replicas when nothing becomes ready', async () => {
    const s = new FunctionState({ name: 'f', namespace: 'ns' }, 1, 5);
    await expect(s.acquire(30)).rejects.toMatchObject({ code: 'no_replicas' });
  });

  it('hands queued requests to replicas as they become ready (scale from zero)', async () => {
    const s = new FunctionState({ name: 'f', namespace: 'ns' }, 2, 5);
    const a = s.acquire(1000);
    const b = s.acquire(1000);
    s.setReplicas([replica('r1', 1000, { state: 'starting' })], 1);
    expect(s.queued).toBe(2);
    s.setReplicas([replica('r1', 1000)], 1);
    expect((await a).id).toBe('r1');
    expect((await b).id).toBe('r1');
    expect(s.upstreams[0].outstanding).toBe(2);
  });
});
