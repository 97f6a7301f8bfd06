import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../gateway/config';
import type { Overview } from '../../gateway/routes/overview-model';
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

jest.setTimeout(180_000);

const PASSWORD = 'top-secret-26';
const auth = { authorization: 'Basic ' + Buffer.from(`admin:${PASSWORD}`).toString('base64') };

/** `bin/mlfaas ARGS` with `env`, stdout not a TTY; killed after 60 s. */
function mlfaas(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/mlfaas'), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', MLFAAS_DATA_DIR: '/nonexistent-mlfaas-top', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('GET /system/overview and mlfaas top --once against a real gateway', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_AUTH_PASSWORD: PASSWORD, MLFAAS_BASIC_AUTH: 'true' });
    seedEchoHttp(p.images);
    const res = await p.json('POST', '/system/functions', aFunction('echo').minScale(1).maxScale(3).slo(250).build(), auth);
    expect(res.status).toBe(202);
    const ready = await eventually(async () =>
      (await p.gw.provider.endpoints({ name: 'echo', namespace: 'openfaas-fn' })).some((r) => r.state === 'ready'), 30_000);
    expect(ready).toBe(true);
  });
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it('answers the snapshot behind basic auth and refuses a bad window with 400 naming it', async () => {
    expect((await p.get('/system/overview')).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await p.get('/function/echo')).status).toBe(200);
    // the requests show up once their seconds are flushed and over (bounded wait)
    const o = await eventually(async () => {
      const res = await p.get('/system/overview', { headers: auth });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Overview;
      // an arrival and its completion can land in different seconds: wait for both
      return body.functions[0]?.rps > 0 && body.functions[0]?.p99Ms !== undefined ? body : undefined;
    }, 15_000, 200);
    expect(o).toBeDefined();
    const f = o!.functions.find((x) => x.name === 'echo')!;
    expect(f).toMatchObject({ namespace: 'openfaas-fn', replicas: { ready: 1, desired: 1, min: 1, max: 3 }, sloMs: 250 });
    expect(f.p99Ms).toBeGreaterThan(0);
    expect(f.replicaList).toHaveLength(1);
    expect(f.replicaList[0].state).toBe('ready');
    // a quota the autoscaler sets live shows at once (the provider's endpoints, not the replica record alone)
    const ref = { name: 'echo', namespace: 'openfaas-fn' };
    await p.gw.provider.setQuota(ref, f.replicaList[0].id, 0.5, 0.75);
    const after = (await (await p.get('/system/overview', { headers: auth })).json()) as Overview;
    expect(after.functions.find((x) => x.name === 'echo')!.replicaList[0]).toMatchObject({ cpuQuota: 0.5, cpuLimit: 0.75 });
    const bad = await p.get('/system/overview?window=0', { headers: auth });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('window');
  });

  it('the dashboard stream (/ui/api/stream) sends the same snapshot as its overview event', async () => {
    const stop = new AbortController();
    const guard = setTimeout(() => stop.abort(), 15_000);
    const res = await p.get('/ui/api/stream', { headers: auth, signal: stop.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let buf = '';
    let frame: Overview | undefined;
    try {
      for (let i = 0; i < 200 && !frame; i++) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += Buffer.from(value).toString();
        const m = /event: overview\ndata: (.*)\n\n/.exec(buf);
        if (m) frame = JSON.parse(m[1]) as Overview;
      }
    } finally {
      clearTimeout(guard);
      stop.abort();
    }
    const f = frame?.functions.find((x) => x.name === 'echo');
    // min, max, scaleToZero and the replica list come only from /system/overview's builder
    expect(f).toMatchObject({ replicas: { min: 1, max: 3 }, scaleToZero: false, sloMs: 250 });
    expect(f?.replicaList).toHaveLength(1);
  });

  it('mlfaas top --once prints one frame with the deployed function, credentials from MLFAAS_AUTH_*', async () => {
    const r = await mlfaas(['top', '--once', '--gateway', p.gw.url], { MLFAAS_AUTH_PASSWORD: PASSWORD });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^mlfaas top {2}\S+ {2}functions 1 {2}jobs 0\n/);
    expect(r.stdout).toMatch(/^echo\s+\S+\s+1\/1\s+1\.\.3\s/m);
    expect(r.stdout).toContain('quota ');
    expect(r.stdout).not.toContain('\x1b['); // not a TTY: no ANSI
  });

  it('mlfaas top says why when the credentials are wrong or the gateway is not there', async () => {
    const wrong = await mlfaas(['top', '--once', '-g', p.gw.url], { MLFAAS_AUTH_PASSWORD: 'nope' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/answered 401[\s\S]*credentials \(from env\) refused/);
    const gone = await mlfaas(['top', '--once', '-g', 'http://127.0.0.1:9'], {});
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('cannot reach the mlfaas gateway at http://127.0.0.1:9');
    const bad = await mlfaas(['top', '--interval', 'soon'], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--interval');
  });
});
