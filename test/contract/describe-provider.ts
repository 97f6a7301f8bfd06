/**
 * The FunctionProvider contract. Every provider (local now, kubernetes later) runs this suite:
 * `describeProvider('local', factory)`. The factory gives a fresh provider whose store can run the
 * image `test/echo-http:1` (an HTTP function answering with its replica id).
 */
import { ErrorCode, PlatformError } from '../../gateway/errors';
import type { FunctionProvider } from '../../gateway/providers/function-provider';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { Agent, request } from 'undici';
import { aFunction } from '../helpers/fixtures';

/**
 * GET from a replica directly: through its socket when it has one (a sandboxed local replica is
 * reachable no other way: its port is in its own network namespace), else its URL.
 */
async function replicaGet(ep: { url: string; socket?: string }, path: string): Promise<unknown> {
  if (!ep.socket) return (await fetch(ep.url + path)).json();
  const dispatcher = new Agent({ connect: { socketPath: ep.socket } });
  try {
    return await (await request(`http://localhost${path}`, { dispatcher })).body.json();
  } finally {
    await dispatcher.close();
  }
}
import { eventually } from '../helpers/platform';

export interface ProviderHarness {
  provider: FunctionProvider;
  /**
   * The CPU time per period, in cores, that replica `replicaId` is held to, read where it is
   * enforced, not from the provider's own answers: the replica's cgroup CFS quota or tokend's
   * grant (local), the limits the kubelet reports it applied (kubernetes). Infinity: unlimited;
   * undefined: nothing enforces it that the harness can see.
   */
  enforcedCpu(ref: { name: string; namespace: string }, replicaId: string): Promise<number | undefined>;
  stop(): Promise<void>;
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e) => (e instanceof PlatformError ? e.code : String(e)),
  );

export function describeProvider(name: string, factory: () => Promise<ProviderHarness>): void {
  describe(`FunctionProvider contract: ${name}`, () => {
    let h: ProviderHarness;
    let p: FunctionProvider;
    beforeAll(async () => {
      h = await factory();
      p = h.provider;
    });
    afterAll(() => h?.stop());

    const spec = (n: string, f = (b: ReturnType<typeof aFunction>) => b) => parseDeployment(f(aFunction(n)).build());
    const ref = (n: string, namespace = 'openfaas-fn') => ({ name: n, namespace });
    const ready = async (n: string, want: number) =>
      eventually(async () => (await p.endpoints(ref(n))).filter((r) => r.state === 'ready').length === want, 20000);

    it('reports its identity', () => {
      const i = p.info();
      expect(i.provider).toEqual(expect.any(String));
      expect(i.version).toEqual({ release: expect.any(String), sha: expect.any(String) });
    });

    it('declares what it enforces on each replica', () => {
      const e = p.enforcement();
      expect(['cpuset', 'mps', 'none']).toContain(e.spatial);
      expect(['cfs', 'tokend', 'none']).toContain(e.temporal);
      expect(['cgroup', 'none']).toContain(e.memory);
      expect(e.summary).toEqual(expect.any(String));
      // a voluntary or absent mechanism is said loudly
      if (e.temporal !== 'cfs') expect(e.summary).toMatch(/WARNING|no agent/);
    });

    it('deploys, lists and gets a function with min_scale replicas', async () => {
      await p.deploy(spec('c-a', (b) => b.minScale(1).label('team', 'ml').env('GREETING', 'hi')));
      const s = await p.get(ref('c-a'));
      expect(s).toEqual(expect.objectContaining({ name: 'c-a', namespace: 'openfaas-fn', image: 'test/echo-http:1', replicas: 1 }));
      expect(s!.labels.team).toBe('ml');
      expect(Date.parse(s!.createdAt)).toBeGreaterThan(Date.now() - 60_000);
      expect((await p.list('openfaas-fn')).map((f) => f.name)).toContain('c-a');
      expect(await ready('c-a', 1)).toBe(true);
      const [ep] = (await p.endpoints(ref('c-a'))).filter((r) => r.state === 'ready');
      const body = (await replicaGet(ep, '/hello')) as { replica: string; env: string };
      expect(body).toEqual(expect.objectContaining({ replica: ep.id, env: 'hi' }));
    });

    it('refuses a second deploy of the same name and an update of an unknown one', async () => {
      expect(await codeOf(p.deploy(spec('c-a')))).toBe(ErrorCode.Conflict);
      expect(await codeOf(p.update(spec('c-nope')))).toBe(ErrorCode.NotFound);
    });

    it('refuses an image it cannot run, naming the image and the build command', async () => {
      const e = await p.deploy(spec('c-img', (b) => b.image('nowhere/none:9'))).catch((x: PlatformError) => x);
      expect(e).toBeInstanceOf(PlatformError);
      expect((e as PlatformError).code).toBe(ErrorCode.ImageNotFound);
      expect((e as PlatformError).message).toMatch(/nowhere\/none:9.*mlfaas build/);
    });

    it('scales up and down', async () => {
      await p.scale(ref('c-a'), 3);
      expect(await ready('c-a', 3)).toBe(true);
      expect((await p.get(ref('c-a')))!.availableReplicas).toBe(3);
      const ids = (await p.endpoints(ref('c-a'))).map((r) => r.id);
      await p.scale(ref('c-a'), 1, [ids[0], ids[2]]);
      expect(await eventually(async () => (await p.endpoints(ref('c-a'))).length === 1, 20000)).toBe(true);
      expect((await p.endpoints(ref('c-a')))[0].id).toBe(ids[1]); // the named ones went
    });

    it('rolls an update onto new replicas', async () => {
      const before = (await p.endpoints(ref('c-a'))).map((r) => r.id);
      await p.update(spec('c-a', (b) => b.minScale(1).env('GREETING', 'v2')));
      const rolled = await eventually(async () => {
        const eps = (await p.endpoints(ref('c-a'))).filter((r) => r.state === 'ready');
        return eps.length === 1 && !before.includes(eps[0].id) ? eps[0] : undefined;
      }, 20000);
      expect(rolled).toBeDefined();
      const body = (await replicaGet(rolled!, '/')) as { env: string };
      expect(body.env).toBe('v2');
    });

    it('sets quotas and weights on replicas, and rejects bad values', async () => {
      const [r] = await p.endpoints(ref('c-a'));
      await p.setQuota(ref('c-a'), r.id, 0.5);
      await p.setWeight(ref('c-a'), r.id, 3);
      const [after] = await p.endpoints(ref('c-a'));
      expect(after).toEqual(expect.objectContaining({ quota: 0.5, weight: 3 }));
      expect(await codeOf(p.setQuota(ref('c-a'), r.id, 1.5))).toBe(ErrorCode.Validation);
      expect(await codeOf(p.setQuota(ref('c-a'), 'no-such-replica', 0.5))).toBe(ErrorCode.NotFound);
    });

    it('holds a replica to the time quota it declares enforcing: setQuota reaches the enforcement', async () => {
      // quotas are what the platform sells: a provider that enforces none does not meet the contract
      const e = p.enforcement();
      expect(e.temporal).not.toBe('none');
      // a CPU limit far above any node's cores, so the quota alone decides (Kubernetes scales the
      // limit by the quota; local replicas get quota × their cores, capped by it)
      await p.deploy(parseDeployment({ ...aFunction('c-q').minScale(1).build(), limits: { cpu: '1024' }, requests: { cpu: '100m' } }));
      expect(await ready('c-q', 1)).toBe(true);
      const [r] = await p.endpoints(ref('c-q'));
      // the agent or kubelet applies a quota asynchronously: read until the enforced value agrees
      const held = async (quota: number, ok: (cores: number) => boolean) => {
        await p.setQuota(ref('c-q'), r.id, quota);
        return eventually(async () => {
          const cores = await h.enforcedCpu(ref('c-q'), r.id);
          return cores !== undefined && ok(cores) ? cores : undefined;
        }, 20000);
      };
      // quota 1 of a replica's cores is a limit, not "unlimited"
      const full = await held(1, (c) => Number.isFinite(c) && c > 0);
      expect(full).toBeDefined();
      // a quarter of it, and back
      expect(await held(0.25, (c) => Math.abs(c / full! - 0.25) < 0.01)).toBeDefined();
      expect(await held(1, (c) => Math.abs(c / full! - 1) < 0.01)).toBeDefined();
      await p.remove(ref('c-q'));
    });

    it('captures replica output as logs', async () => {
      const ac = new AbortController();
      const lines = await eventually(async () => {
        const out = [];
        for await (const l of p.logs(ref('c-a'), { follow: false, signal: ac.signal })) out.push(l);
        return out.some((l) => /echo-http ready/.test(l.text)) ? out : undefined;
      });
      expect(lines![0]).toEqual(expect.objectContaining({ name: 'c-a', namespace: 'openfaas-fn', instance: expect.stringMatching(/^c-a-/) }));
    });

    it('stores secrets: create, conflict, list, update, remove', async () => {
      await p.secrets.create({ name: 'k1', namespace: 'openfaas-fn', value: 'v' });
      expect(await codeOf(p.secrets.create({ name: 'k1', namespace: 'openfaas-fn', value: 'v' }))).toBe(ErrorCode.Conflict);
      expect(await p.secrets.list('openfaas-fn')).toEqual([{ name: 'k1', namespace: 'openfaas-fn' }]);
      await p.secrets.update({ name: 'k1', namespace: 'openfaas-fn', value: 'w' });
      expect(await codeOf(p.secrets.update({ name: 'k2', namespace: 'openfaas-fn', value: 'w' }))).toBe(ErrorCode.NotFound);
      await p.secrets.remove('k1', 'openfaas-fn');
      expect(await codeOf(p.secrets.remove('k1', 'openfaas-fn'))).toBe(ErrorCode.NotFound);
    });

    it('keeps namespaces apart', async () => {
      await p.deploy(spec('c-a', (b) => b.namespace('dev').minScale(0)));
      expect((await p.list('dev')).map((f) => f.name)).toEqual(['c-a']);
      expect(await p.namespaces()).toEqual(expect.arrayContaining(['openfaas-fn', 'dev']));
      await p.remove(ref('c-a', 'dev'));
      expect(await p.get(ref('c-a', 'dev'))).toBeUndefined();
      expect(await p.get(ref('c-a'))).toBeDefined();
    });

    it('removes a function and stops its replicas', async () => {
      const pids = (await p.endpoints(ref('c-a'))).map((r) => r.pid).filter(Boolean) as number[];
      await p.remove(ref('c-a'));
      expect(await codeOf(p.remove(ref('c-a')))).toBe(ErrorCode.NotFound);
      expect(await p.get(ref('c-a'))).toBeUndefined();
      const gone = await eventually(() =>
        pids.every((pid) => {
          try {
            process.kill(pid, 0);
            return false;
          } catch {
            return true;
          }
        }),
      );
      expect(gone).toBe(true);
    });
  });
}
