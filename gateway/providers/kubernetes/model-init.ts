/**
 * Models by URI on Kubernetes (issue 25, part 4): an init container fetches the function's model
 * into the node's hostPath cache, one directory per version (its sha256), verified the way the
 * local agent's cache does it (node-runtime/model-cache.ts): to a temp file, bounded in size and
 * time, its SHA-256 compared, then renamed. Pods of the version on that node find it there and
 * skip the fetch. The function's container sees only its version's directory, read-only.
 * A hit touches the version directory (its last use for the node agent's LRU eviction, which never
 * takes a version a pod on the node mounts: modelVersionsMounted).
 * A failed fetch fails the init container (its message in the pod status), so the Deployment's
 * rolling update (maxUnavailable 0) stalls with the old pods serving. Pure: objects out.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { posix } from 'node:path';
import type { ModelSource } from '../../registry/model-uri-spec';
import { modelVersionOf } from '../../registry/model-uri-spec';
import { modelFileName } from '../../../node-runtime/model-cache';

/** Each node's model cache (a hostPath; one directory per sha256). */
export const NODE_MODEL_CACHE_DIR = '/var/lib/mlfaas/model-cache';
/** The model store `file://` URIs name, on every node (the operator mounts or syncs it there). */
export const NODE_MODEL_STORE_DIR = '/var/lib/mlfaas/models';
/** Where the function's container sees its model (as under the local provider). */
export const MODEL_MOUNT = '/var/openfaas/model';
/** The init container's image: a shell with wget, head, sha256sum, realpath, timeout. */
export const MODEL_FETCH_IMAGE = 'busybox:1.36';

export interface ModelFetchLimits {
  maxBytes: number;
  timeoutS: number;
}

export const DEFAULT_FETCH_LIMITS: ModelFetchLimits = { maxBytes: 10 * 1024 ** 3, timeoutS: 600 };

/**
 * The init container's script. Every value comes from its environment (never spliced into the
 * text): MODEL_URI, MODEL_SHA256, MODEL_FILE, MODEL_MAX_BYTES, MODEL_TIMEOUT_S, MODEL_DIR,
 * and for file:// MODEL_STORE_PATH and STORE_DIR.
 */
export const MODEL_FETCH_SCRIPT = `set -eu
f="$MODEL_DIR/$MODEL_FILE"
if [ -f "$f" ]; then touch "$MODEL_DIR" 2>/dev/null || true; echo "model $MODEL_SHA256: in the node's cache"; exit 0; fi
t="$MODEL_DIR/.tmp-\${HOSTNAME:-pod}-$$"
trap 'rm -f "$t" "$t.rc"' EXIT
fail() { echo "$MODEL_URI: $*" >&2; exit 1; }
if [ -n "\${MODEL_STORE_PATH:-}" ]; then
  root=$(realpath "$STORE_DIR") || fail "the model store $STORE_DIR does not exist on this node"
  r=$(realpath "$STORE_DIR/$MODEL_STORE_PATH" 2>/dev/null) || fail "no such file in the model store"
  case "$r" in "$root"/*) ;; *) fail "leads out of the model store (a symbolic link?); refused" ;; esac
  [ -f "$r" ] || fail "is not a regular file"
  head -c $((MODEL_MAX_BYTES + 1)) "$r" > "$t"
else
  { timeout "$MODEL_TIMEOUT_S" wget -q -O - "$MODEL_URI" || echo $? > "$t.rc"; } | head -c $((MODEL_MAX_BYTES + 1)) > "$t"
fi
n=$(wc -c < "$t" | tr -d ' ')
[ "$n" -le "$MODEL_MAX_BYTES" ] || fail "more than $MODEL_MAX_BYTES bytes (the model size limit); transfer stopped"
if [ -s "$t.rc" ]; then
  [ "$(cat "$t.rc")" = 124 ] && fail "not fetched within $MODEL_TIMEOUT_S s"
  fail "cannot fetch it (wget exit $(cat "$t.rc"))"
fi
got=$(sha256sum "$t" | cut -d' ' -f1)
[ "$got" = "$MODEL_SHA256" ] || fail "checksum mismatch: mlfaas.model.sha256 is $MODEL_SHA256, the $n bytes fetched hash to $got"
chmod 0444 "$t"
mv -f "$t" "$f"
echo "model $MODEL_SHA256: fetched $n bytes from $MODEL_URI, sha256 verified"
`;

type Obj = Record<string, unknown>;

/** What a function with a model by URI adds to its pod: volumes, an init container, its container's mount and env. */
export interface ModelPodParts {
  volumes: Obj[];
  initContainers: Obj[];
  mounts: Obj[];
  env: Array<{ name: string; value: string }>;
}

export function modelPodParts(source: ModelSource, limits: ModelFetchLimits = DEFAULT_FETCH_LIMITS, image = MODEL_FETCH_IMAGE): ModelPodParts {
  const file = modelFileName(source.uri);
  const volumes: Obj[] = [{ name: 'mlfaas-model', hostPath: { path: `${NODE_MODEL_CACHE_DIR}/${source.sha256}`, type: 'DirectoryOrCreate' } }];
  const initMounts: Obj[] = [{ name: 'mlfaas-model', mountPath: '/model' }];
  const env: Array<{ name: string; value: string }> = [
    { name: 'MODEL_URI', value: source.uri },
    { name: 'MODEL_SHA256', value: source.sha256 },
    { name: 'MODEL_FILE', value: file },
    { name: 'MODEL_MAX_BYTES', value: String(limits.maxBytes) },
    { name: 'MODEL_TIMEOUT_S', value: String(limits.timeoutS) },
    { name: 'MODEL_DIR', value: '/model' },
  ];
  if (source.scheme === 'file') {
    volumes.push({ name: 'mlfaas-model-store', hostPath: { path: NODE_MODEL_STORE_DIR, type: 'Directory' } });
    initMounts.push({ name: 'mlfaas-model-store', mountPath: '/store', readOnly: true });
    env.push({ name: 'MODEL_STORE_PATH', value: source.storePath ?? '' }, { name: 'STORE_DIR', value: '/store' });
  }
  return {
    volumes,
    initContainers: [{
      name: 'mlfaas-model-fetch',
      image,
      command: ['/bin/sh', '-c', MODEL_FETCH_SCRIPT],
      env,
      volumeMounts: initMounts,
      // the failure's last lines become the pod status' message
      terminationMessagePolicy: 'FallbackToLogsOnError',
      resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { memory: '64Mi' } },
      securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
    }],
    mounts: [{ name: 'mlfaas-model', mountPath: MODEL_MOUNT, readOnly: true }],
    env: [
      { name: 'MODEL_PATH', value: `${MODEL_MOUNT}/${file}` },
      { name: 'MLFAAS_MODEL_VERSION', value: modelVersionOf(source.sha256) },
    ],
  };
}

/**
 * The model versions the pods on a node mount from its cache (hostPath `<cacheDir>/<sha256>`):
 * the ones its node agent must not evict. Pods that have finished (Succeeded, Failed) mount
 * nothing; every other pod counts, Pending ones (their init container may be fetching) and
 * terminating ones included.
 */
export function modelVersionsMounted(pods: readonly V1Pod[], cacheDir = NODE_MODEL_CACHE_DIR): Set<string> {
  const out = new Set<string>();
  const root = posix.normalize(cacheDir).replace(/\/+$/, '');
  for (const p of pods) {
    if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
    for (const v of p.spec?.volumes ?? []) {
      const path = v.hostPath?.path;
      if (!path) continue;
      const n = posix.normalize(path).replace(/\/+$/, '');
      if (posix.dirname(n) === root && /^[0-9a-f]{64}$/.test(posix.basename(n))) out.add(posix.basename(n));
    }
  }
  return out;
}
