/**
 * An image registry of the OCI Distribution API's pull and monolithic-push subset, over real HTTP
 * on 127.0.0.1: `GET|HEAD /v2/<name>/manifests/<tag|digest>` (Content-Type the manifest's media
 * type, `Docker-Content-Digest`), `GET /v2/<name>/blobs/<digest>`, `POST /v2/<name>/blobs/uploads/`
 * + `PUT <location>?digest=`, `PUT /v2/<name>/manifests/<tag>`; errors as the spec's JSON
 * (`NAME_UNKNOWN`, `MANIFEST_UNKNOWN`, `BLOB_UNKNOWN`, `DIGEST_INVALID`). With `auth`, the token
 * flow public registries use: 401 + `WWW-Authenticate: Bearer realm=…,service=…,scope=…`, and a
 * token endpoint that grants pull to `public` repositories only. `pushImage` pushes an image with
 * labels through the API, so the same code pushes to a real registry (Debian's docker-registry).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';

export class FakeRegistry {
  private server?: Server;
  url = '';
  private readonly blobs = new Map<string, Buffer>();
  private readonly manifests = new Map<string, { type: string; body: Buffer }>(); // repo@ref
  private readonly uploads = new Set<string>();
  /** Every request, as `METHOD path`. */
  readonly requests: string[] = [];

  constructor(private readonly o: { auth?: { public: string[] } } = {}) {}

  get host(): string {
    return this.url.replace(/^http:\/\//, '');
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }

  private error(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ errors: [{ code, message, detail: null }] }));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url!, this.url);
    this.requests.push(`${req.method} ${url.pathname}`);
    if (url.pathname === '/token') {
      const repo = /^repository:([^:]+):pull$/.exec(url.searchParams.get('scope') ?? '')?.[1];
      if (!repo || !this.o.auth?.public.includes(repo)) return this.error(res, 401, 'UNAUTHORIZED', 'authentication required');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: `pull:${repo}`, expires_in: 300 }));
      return;
    }
    const m = /^\/v2\/(.+?)\/(blobs\/uploads)\/(.*)$/.exec(url.pathname) ?? /^\/v2\/(.+?)\/(manifests|blobs)\/(.+)$/.exec(url.pathname);
    if (url.pathname === '/v2/' || !m)
      return void res.writeHead(url.pathname === '/v2/' ? 200 : 404, { 'docker-distribution-api-version': 'registry/2.0' }).end('{}');
    const [, repo, what, ref] = m;
    if (this.o.auth && req.method === 'GET' && req.headers.authorization !== `Bearer pull:${repo}`) {
      const realm = `${this.url}/token`;
      return this.error(res, 401, 'UNAUTHORIZED', 'authentication required',
        { 'www-authenticate': `Bearer realm="${realm}",service="fake-registry",scope="repository:${repo}:pull"` });
    }
    if (what === 'blobs/uploads') {
      if (req.method === 'POST') {
        const id = randomUUID();
        this.uploads.add(id);
        return void res.writeHead(202, { location: `/v2/${repo}/blobs/uploads/${id}`, 'docker-upload-uuid': id }).end();
      }
      const digest = url.searchParams.get('digest');
      if (req.method !== 'PUT' || !this.uploads.delete(ref) || !digest) return this.error(res, 404, 'BLOB_UPLOAD_UNKNOWN', 'blob upload unknown to registry');
      if (sha(body) !== digest) return this.error(res, 400, 'DIGEST_INVALID', 'provided digest did not match uploaded content');
      this.blobs.set(digest, body);
      return void res.writeHead(201, { location: `/v2/${repo}/blobs/${digest}`, 'docker-content-digest': digest }).end();
    }
    if (what === 'blobs') {
      const b = this.blobs.get(ref);
      if (!b) return this.error(res, 404, 'BLOB_UNKNOWN', 'blob unknown to registry');
      return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'docker-content-digest': ref, 'content-length': String(b.length) }).end(b);
    }
    if (req.method === 'PUT') {
      const type = String(req.headers['content-type'] ?? OCI_MANIFEST);
      const digest = sha(body);
      this.manifests.set(`${repo}@${ref}`, { type, body });
      this.manifests.set(`${repo}@${digest}`, { type, body });
      return void res.writeHead(201, { location: `/v2/${repo}/manifests/${digest}`, 'docker-content-digest': digest }).end();
    }
    if (![...this.manifests.keys()].some((k) => k.startsWith(`${repo}@`))) return this.error(res, 404, 'NAME_UNKNOWN', 'repository name not known to registry');
    const man = this.manifests.get(`${repo}@${ref}`);
    if (!man) return this.error(res, 404, 'MANIFEST_UNKNOWN', 'manifest unknown');
    res.writeHead(200, { 'content-type': man.type, 'docker-content-digest': sha(man.body), 'content-length': String(man.body.length) });
    res.end(req.method === 'HEAD' ? undefined : man.body);
  }
}

/** Pushes one blob (monolithic upload); returns its descriptor. */
async function pushBlob(base: string, repo: string, blob: Buffer, mediaType: string, headers: Record<string, string>): Promise<{ mediaType: string;
  digest: string; size: number; }> {
  const digest = sha(blob);
  const start = await fetch(`${base}/v2/${repo}/blobs/uploads/`, { method: 'POST', headers });
  if (start.status !== 202) throw new Error(`upload start: ${start.status} ${await start.text()}`);
  const loc = new URL(start.headers.get('location')!, base);
  loc.searchParams.set('digest', digest);
  const put = await fetch(loc, { method: 'PUT', body: blob, headers: { ...headers, 'content-type': 'application/octet-stream' } });
  if (put.status !== 201) throw new Error(`upload: ${put.status} ${await put.text()}`);
  return { mediaType, digest, size: blob.length };
}

/**
 * Pushes an image of no layers whose config carries `labels` to `base` (a registry URL) as
 * `repo:tag`; with `index`, as a multi-platform index (arm64 first, then amd64 with the labels).
 */
export async function pushImage(base: string, repo: string, tag: string, labels: Record<string, string>,
  o: { index?: boolean; headers?: Record<string, string> } = {}): Promise<void> {
  const headers = o.headers ?? {};
  const manifestFor = async (arch: string, l: Record<string, string>) => {
    const config = await pushBlob(base, repo,
      Buffer.from(JSON.stringify({ architecture: arch, os: 'linux', config: { Labels: l }, rootfs: { type: 'layers', diff_ids: [] } })), OCI_CONFIG, headers);
    // one empty layer: distribution 2.8 refuses a schema-2 manifest without layers
    const layer = await pushBlob(base, repo, Buffer.from('H4sIAAAAAAAA/+3BAQ0AAADCoPdPbQ43oAAAAAAAAAAAgJ8BOp5+kAAoAAA=', 'base64'),
      'application/vnd.oci.image.layer.v1.tar+gzip', headers);
    const body = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: OCI_MANIFEST, config, layers: [layer] }));
    return { body, digest: sha(body) };
  };
  const putManifest = async (ref: string, body: Buffer, type: string) => {
    const r = await fetch(`${base}/v2/${repo}/manifests/${ref}`, { method: 'PUT', body, headers: { ...headers, 'content-type': type } });
    if (r.status !== 201) throw new Error(`manifest ${ref}: ${r.status} ${await r.text()}`);
  };
  if (!o.index) {
    const m = await manifestFor('amd64', labels);
    return putManifest(tag, m.body, OCI_MANIFEST);
  }
  const arm = await manifestFor('arm64', {});
  const amd = await manifestFor('amd64', labels);
  await putManifest(arm.digest, arm.body, OCI_MANIFEST);
  await putManifest(amd.digest, amd.body, OCI_MANIFEST);
  const idx = {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: [
      { mediaType: OCI_MANIFEST, digest: arm.digest, size: arm.body.length, platform: { os: 'linux', architecture: 'arm64' } },
      { mediaType: OCI_MANIFEST, digest: amd.digest, size: amd.body.length, platform: { os: 'linux', architecture: 'amd64' } },
    ],
  };
  await putManifest(tag, Buffer.from(JSON.stringify(idx)), OCI_INDEX);
}
