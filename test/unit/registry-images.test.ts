/**
 * The Kubernetes provider's image check against a registry over real HTTP (the Distribution API
 * subset in test/helpers/fake-registry.ts; where Debian's docker-registry is installed, the same
 * pushes and lookups also run against it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, PlatformError } from '../../gateway/errors';
import { KIND_LABEL, parseImageRef, registryImages } from '../../gateway/providers/kubernetes/registry-images';
import { FakeRegistry, pushImage } from '../helpers/fake-registry';
import { eventually } from '../helpers/platform';

describe('image references', () => {
  it.each([
    ['busybox', { host: 'registry-1.docker.io', repo: 'library/busybox', reference: 'latest' }],
    ['mlfaas/digits-train:0.1.0', { host: 'registry-1.docker.io', repo: 'mlfaas/digits-train', reference: '0.1.0' }],
    ['ghcr.io/openfaas/figlet:latest', { host: 'ghcr.io', repo: 'openfaas/figlet', reference: 'latest' }],
    ['localhost:5000/fn/echo', { host: 'localhost:5000', repo: 'fn/echo', reference: 'latest' }],
    ['10.0.0.5:5000/echo:2@sha256:abc', { host: '10.0.0.5:5000', repo: 'echo', reference: 'sha256:abc' }],
    ['registry.example.com/a/b/c:v1', { host: 'registry.example.com', repo: 'a/b/c', reference: 'v1' }],
  ])('%s', (image, want) => expect(parseImageRef(image)).toEqual(want));
});

describe('registry image check', () => {
  const reg = new FakeRegistry();
  const priv = new FakeRegistry({ auth: { public: ['fn/open'] } });
  let check: ReturnType<typeof registryImages>;

  beforeAll(async () => {
    await reg.start();
    await priv.start();
    check = registryImages({ insecure: [reg.host, priv.host], timeoutMs: 5000 });
    await pushImage(reg.url, 'fn/train', '0.1.0', { [KIND_LABEL]: 'training' });
    await pushImage(reg.url, 'fn/echo', 'latest', {});
    await pushImage(reg.url, 'fn/multi', '1', { [KIND_LABEL]: 'training' }, { index: true });
  });
  afterAll(async () => {
    await reg.stop();
    await priv.stop();
  });

  it('reads the kind from the image config label', async () => {
    expect(await check(`${reg.host}/fn/train:0.1.0`)).toEqual({ kind: 'training' });
    expect(await check(`${reg.host}/fn/echo`)).toEqual({ kind: 'inference' }); // any image runs, as on faas-netes
  });

  it('resolves a multi-platform index to its linux/amd64 image', async () => {
    expect(await check(`${reg.host}/fn/multi:1`)).toEqual({ kind: 'training' });
    expect(reg.requests).toEqual(expect.arrayContaining(['GET /v2/fn/multi/manifests/1', expect.stringMatching(/^GET \/v2\/fn\/multi\/manifests\/sha256:/)]));
  });

  it('says an image is not there (unknown tag, unknown repository)', async () => {
    expect(await check(`${reg.host}/fn/train:0.2.0`)).toBeUndefined();
    expect(await check(`${reg.host}/fn/nothing:1`)).toBeUndefined();
  });

  it('takes an anonymous pull token where the registry offers one, and accepts what it may not read', async () => {
    await pushImage(priv.url, 'fn/open', '1', { [KIND_LABEL]: 'training' });
    await pushImage(priv.url, 'fn/closed', '1', { [KIND_LABEL]: 'training' });
    expect(await check(`${priv.host}/fn/open:1`)).toEqual({ kind: 'training' });
    expect(priv.requests.filter((r) => r === 'GET /token').length).toBe(1);
    // a private repository: the kubelet pulls it with its imagePullSecrets; the label cannot be read
    expect(await check(`${priv.host}/fn/closed:1`)).toEqual({ kind: 'inference' });
  });

  it('is a clear error when the registry cannot be reached', async () => {
    const port = await new Promise<number>((r) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => r(p));
      });
    });
    const e = await check(`127.0.0.1:${port}/fn/x:1`).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PlatformError);
    expect(e).toEqual(expect.objectContaining({ code: ErrorCode.UpstreamUnavailable, field: 'image',
      message: expect.stringContaining('MLFAAS_KUBE_IMAGE_CHECK=off') }));
  });
});

/** Debian's docker-registry (distribution), where installed: the pushes and lookups above against the real thing. */
const realRegistry = spawnSync('sh', ['-c', 'command -v docker-registry']).status === 0;
(realRegistry ? describe : describe.skip)('against distribution (docker-registry)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-registry-'));
  let child: ChildProcess;
  const port = 41000 + (process.pid % 1000);
  const host = `127.0.0.1:${port}`;
  beforeAll(async () => {
    writeFileSync(join(dir, 'config.yml'),
      `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\nhttp:\n  addr: ${host}\nlog:\n  level: error\n`);
    child = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: 'ignore' });
    expect(await eventually(async () => (await fetch(`http://${host}/v2/`).catch(() => undefined))?.status === 200, 10_000)).toBe(true);
  });
  afterAll(() => {
    child?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads kinds, resolves an index, and says what is missing', async () => {
    const check = registryImages({ insecure: [host], timeoutMs: 5000 });
    await pushImage(`http://${host}`, 'fn/train', '0.1.0', { [KIND_LABEL]: 'training' });
    await pushImage(`http://${host}`, 'fn/multi', '1', { [KIND_LABEL]: 'training' }, { index: true });
    expect(await check(`${host}/fn/train:0.1.0`)).toEqual({ kind: 'training' });
    expect(await check(`${host}/fn/multi:1`)).toEqual({ kind: 'training' });
    expect(await check(`${host}/fn/train:9`)).toBeUndefined();
    expect(await check(`${host}/fn/none:1`)).toBeUndefined();
  });
});
