/**
 * The three patch formats the Kubernetes API accepts on PATCH:
 * - `application/merge-patch+json`: RFC 7386 (objects merge, `null` deletes, lists replace);
 * - `application/strategic-merge-patch+json`: like a merge patch, except for lists whose Go type
 *   declares a merge key (here the ones the provider touches: containers, initContainers,
 *   volumes, volumeMounts, env, ports, tolerations by key, imagePullSecrets by name), which merge
 *   element by element on that key; `$patch: delete` in an element removes it. Other strategic
 *   directives (`$retainKeys`, `$setElementOrder`, `$deleteFromPrimitiveList`) answer 415-like
 *   400s rather than being half-applied;
 * - `application/json-patch+json`: RFC 6902 (add, remove, replace, move, copy, test).
 * `application/apply-patch+yaml` (server-side apply) is not supported: 415.
 */
import { ApiError } from './store';

type J = unknown;
const isObj = (x: J): x is Record<string, J> => typeof x === 'object' && x !== null && !Array.isArray(x);

export function mergePatch(target: J, patch: J): J {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, J> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Merge keys of the list fields a strategic merge patch merges element-wise. */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  env: 'name',
  ports: 'containerPort',
  imagePullSecrets: 'name',
  tolerations: 'key',
};

export function strategicMergePatch(target: J, patch: J, field = ''): J {
  if (Array.isArray(patch)) {
    const mk = MERGE_KEYS[field];
    if (!mk || !Array.isArray(target) || !patch.every(isObj)) return structuredClone(patch);
    const out = (target as J[]).map((x) => structuredClone(x));
    for (const el of patch as Array<Record<string, J>>) {
      const i = out.findIndex((o) => isObj(o) && o[mk] === el[mk]);
      if (el.$patch === 'delete') {
        if (i >= 0) out.splice(i, 1);
        continue;
      }
      if (i >= 0) out[i] = strategicMergePatch(out[i], el);
      else out.push(structuredClone(el));
    }
    return out;
  }
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, J> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) {
      if (k === '$patch' && v === 'replace') return Object.fromEntries(Object.entries(patch).filter(([x]) => x !== '$patch'));
      throw new ApiError(400, 'BadRequest', `strategic merge patch directive ${k} is not supported by this server`);
    }
    if (v === null) delete out[k];
    else out[k] = strategicMergePatch(out[k], v, k);
  }
  return out;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new ApiError(422, 'Invalid', `json patch: invalid path "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(doc: J, parts: string[]): { parent: Record<string, J> | J[]; key: string } {
  let cur: J = doc;
  for (const p of parts.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[Number(p)] : isObj(cur) ? cur[p] : undefined;
    if (cur === undefined) throw new ApiError(422, 'Invalid', `json patch: path /${parts.join('/')} does not exist`);
  }
  if (!isObj(cur) && !Array.isArray(cur)) throw new ApiError(422, 'Invalid', `json patch: path /${parts.join('/')} has no parent object`);
  return { parent: cur, key: parts[parts.length - 1] };
}

function getAt(doc: J, parts: string[]): J {
  let cur = doc;
  for (const p of parts) cur = Array.isArray(cur) ? cur[Number(p)] : isObj(cur) ? cur[p] : undefined;
  return cur;
}

export function jsonPatch(doc: J, ops: J): J {
  if (!Array.isArray(ops)) throw new ApiError(400, 'BadRequest', 'json patch must be an array of operations');
  let out = structuredClone(doc);
  for (const op of ops as Array<Record<string, J>>) {
    const parts = pointer(String(op.path ?? ''));
    const set = (v: J) => {
      if (!parts.length) return void (out = v);
      const { parent, key } = parentOf(out, parts);
      if (Array.isArray(parent)) {
        const i = key === '-' ? parent.length : Number(key);
        if (!(i >= 0 && i <= parent.length)) throw new ApiError(422, 'Invalid', `json patch: index ${key} out of range`);
        parent.splice(i, op.op === 'replace' ? 1 : 0, v);
      } else parent[key] = v;
    };
    const del = () => {
      const { parent, key } = parentOf(out, parts);
      if (Array.isArray(parent)) {
        if (!(Number(key) < parent.length)) throw new ApiError(422, 'Invalid', `json patch: index ${key} out of range`);
        parent.splice(Number(key), 1);
      } else {
        if (!(key in parent)) throw new ApiError(422, 'Invalid', `json patch: cannot remove /${parts.join('/')}: not found`);
        delete parent[key];
      }
    };
    switch (op.op) {
      case 'add':
        set(structuredClone(op.value));
        break;
      case 'replace':
        if (getAt(out, parts) === undefined) throw new ApiError(422, 'Invalid', `json patch: cannot replace /${parts.join('/')}: not found`);
        set(structuredClone(op.value));
        break;
      case 'remove':
        del();
        break;
      case 'move':
      case 'copy': {
        const from = pointer(String(op.from ?? ''));
        const v = structuredClone(getAt(out, from));
        if (v === undefined) throw new ApiError(422, 'Invalid', `json patch: from /${from.join('/')} not found`);
        if (op.op === 'move') {
          const { parent, key } = parentOf(out, from);
          if (Array.isArray(parent)) parent.splice(Number(key), 1);
          else delete parent[key];
        }
        set(v);
        break;
      }
      case 'test':
        if (JSON.stringify(getAt(out, parts)) !== JSON.stringify(op.value))
          throw new ApiError(422, 'Invalid', `json patch: test failed at /${parts.join('/')}`);
        break;
      default:
        throw new ApiError(400, 'BadRequest', `json patch: unknown op ${String(op.op)}`);
    }
  }
  return out;
}

/** Applies a PATCH body by its content type (400/415 on anything else). */
export function applyPatch(contentType: string | undefined, target: J, body: J): J {
  const ct = (contentType ?? '').split(';')[0].trim();
  if (ct === 'application/merge-patch+json') return mergePatch(target, body);
  if (ct === 'application/strategic-merge-patch+json') return strategicMergePatch(target, body);
  if (ct === 'application/json-patch+json') return jsonPatch(target, body);
  throw new ApiError(415, 'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, ` +
    `application/merge-patch+json, application/strategic-merge-patch+json (got "${ct}")`);
}
