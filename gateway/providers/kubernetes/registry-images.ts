/**
 * Whether an image exists, and what kind of mlfaas function it holds, from its registry (the
 * OCI Distribution API, as kubelets pull): `GET /v2/<repo>/manifests/<ref>` (an index is
 * resolved to its linux/amd64 manifest), then the image config blob, whose label
 * `io.mlfaas.kind` the templates' Dockerfiles set. Anonymous token auth (`WWW-Authenticate:
 * Bearer realm=…`) as public registries answer it. faas-netes checks nothing and lets the
 * kubelet fail with ImagePullBackOff; a deploy here is a 400 instead when the registry says the
 * image does not exist.
 */
import { ErrorCode, PlatformError } from '../../errors';
import type { FunctionKind } from './kubernetes-provider';

export const KIND_LABEL = 'io.mlfaas.kind';

const ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

export interface ImageRef {
  /** Registry host[:port] (docker.io images: registry-1.docker.io). */
  host: string;
  repo: string;
  /** Tag or digest. */
  reference: string;
}

/** Docker's normalisation of an image name: `busybox` → registry-1.docker.io/library/busybox:latest. Pure. */
export function parseImageRef(image: string): ImageRef {
  let rest = image;
  let reference = 'latest';
  const at = rest.indexOf('@');
  if (at >= 0) rest = rest.slice(0, at);
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    reference = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  if (at >= 0) reference = image.slice(at + 1); // a digest wins over a tag, as the kubelet pulls it
  const slash = rest.indexOf('/');
  const first = slash < 0 ? '' : rest.slice(0, slash);
  const explicitHost = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  const host = explicitHost ? first : 'docker.io';
  let repo = explicitHost ? rest.slice(slash + 1) : rest;
  if (host === 'docker.io' && !repo.includes('/')) repo = `library/${repo}`;
  return { host: host === 'docker.io' ? 'registry-1.docker.io' : host, repo, reference };
}

export interface RegistryOptions {
  /** Registries spoken to over plain http (a registry on the cluster's own network, `localhost:5000`). */
  insecure: readonly string[];
  timeoutMs: number;
}

interface Manifest {
  mediaType?: string;
  manifests?: Array<{ digest: string; platform?: { os?: string; architecture?: string } }>;
  config?: { digest: string };
}

/** A registry answered something that is neither the image nor its absence. */
const unreachable = (image: string, why: string) =>
  new PlatformError(ErrorCode.UpstreamUnavailable,
    `cannot check image "${image}" in its registry: ${why} (MLFAAS_KUBE_IMAGE_CHECK=off deploys without the check)`, 'image');

/**
 * The kind of the image's function (`inference` for an image without the label: faas-netes runs
 * any image), undefined when the registry says it does not exist. A private registry that refuses
 * anonymous pulls cannot be asked: the image is taken as the kubelet will pull it, with its label
 * unknown (`inference`).
 */
export function registryImages(opts: RegistryOptions): (image: string) => Promise<{ kind: FunctionKind } | undefined> {
  const tokens = new Map<string, string>();
  return async (image) => {
    const ref = parseImageRef(image);
    const base = `${opts.insecure.includes(ref.host) ? 'http' : 'https'}://${ref.host}/v2/${ref.repo}`;
    const get = async (url: string, accept?: string): Promise<Response> => {
      const headers = (): Record<string, string> =>
        ({ ...(accept ? { accept } : {}), ...(tokens.has(ref.repo) ? { authorization: `Bearer ${tokens.get(ref.repo)}` } : {}) });
      let res = await fetch(url, { headers: headers(), signal: AbortSignal.timeout(opts.timeoutMs) });
      const challenge = res.headers.get('www-authenticate');
      if (res.status === 401 && challenge?.startsWith('Bearer ')) {
        const p = Object.fromEntries([...challenge.slice(7).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
        const q = new URLSearchParams({ ...(p.service ? { service: p.service } : {}), scope: p.scope ?? `repository:${ref.repo}:pull` });
        const t = await fetch(`${p.realm}?${q}`, { signal: AbortSignal.timeout(opts.timeoutMs) });
        if (t.ok) {
          const body = (await t.json()) as { token?: string; access_token?: string };
          tokens.set(ref.repo, body.token ?? body.access_token ?? '');
          res = await fetch(url, { headers: headers(), signal: AbortSignal.timeout(opts.timeoutMs) });
        }
      }
      return res;
    };
    try {
      let res = await get(`${base}/manifests/${ref.reference}`, ACCEPT);
      if (res.status === 404) return undefined;
      if (res.status === 401 || res.status === 403) return { kind: 'inference' };
      if (!res.ok) throw unreachable(image, `HTTP ${res.status} for its manifest`);
      let m = (await res.json()) as Manifest;
      if (m.manifests) {
        const pick = m.manifests.find((x) => x.platform?.os === 'linux' && x.platform.architecture === 'amd64') ?? m.manifests[0];
        if (!pick) return undefined;
        res = await get(`${base}/manifests/${pick.digest}`, ACCEPT);
        if (!res.ok) throw unreachable(image, `HTTP ${res.status} for its platform manifest`);
        m = (await res.json()) as Manifest;
      }
      if (!m.config?.digest) return { kind: 'inference' };
      res = await get(`${base}/blobs/${m.config.digest}`);
      if (!res.ok) throw unreachable(image, `HTTP ${res.status} for its config`);
      const cfg = (await res.json()) as { config?: { Labels?: Record<string, string> | null } };
      const kind = cfg.config?.Labels?.[KIND_LABEL];
      return { kind: kind === 'training' || kind === 'classic' ? kind : 'inference' };
    } catch (e) {
      if (e instanceof PlatformError) throw e;
      throw unreachable(image, (e as Error).message);
    }
  };
}
