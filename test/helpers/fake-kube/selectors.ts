/**
 * Kubernetes label and field selectors as the API server parses them
 * (k8s.io/apimachinery/pkg/labels and pkg/fields): `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a`, `!a`, comma-joined (AND). An unparsable selector is a 400 in the server.
 * Field selectors support `=`, `==`, `!=` on the paths the provider uses.
 */

export type Labels = Record<string, string> | undefined;
type Req = (l: Record<string, string>) => boolean;

export class SelectorError extends Error {}

/** Splits on commas that are not inside parentheses. */
function clauses(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((c) => c.trim()).filter((c) => c.length > 0);
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;

function key(k: string, whole: string): string {
  const t = k.trim();
  if (!KEY.test(t)) throw new SelectorError(`unable to parse requirement: invalid label key "${t}" in "${whole}"`);
  return t;
}

export function parseLabelSelector(sel: string | undefined): (l: Labels) => boolean {
  if (!sel) return () => true;
  const reqs: Req[] = clauses(sel).map((c): Req => {
    let m = /^(.+?)\s+(in|notin)\s*\((.*)\)$/.exec(c);
    if (m) {
      const k = key(m[1], sel);
      const vals = new Set(m[3].split(',').map((v) => v.trim()));
      return m[2] === 'in' ? (l) => k in l && vals.has(l[k]) : (l) => !(k in l) || !vals.has(l[k]);
    }
    m = /^(.+?)(==|!=|=)(.*)$/.exec(c);
    if (m) {
      const k = key(m[1], sel);
      const v = m[3].trim();
      return m[2] === '!=' ? (l) => l[k] !== v : (l) => l[k] === v;
    }
    if (c.startsWith('!')) {
      const k = key(c.slice(1), sel);
      return (l) => !(k in l);
    }
    const k = key(c, sel);
    return (l) => k in l;
  });
  return (l) => reqs.every((r) => r(l ?? {}));
}

/** Reads a dotted path (`metadata.name`, `spec.nodeName`, `status.phase`) of an object. */
function at(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const p of path.split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[p] : undefined;
  return cur === undefined || cur === null ? '' : String(cur);
}

/** Field selectors on the fields the real server supports for the resources here. */
export function parseFieldSelector(sel: string | undefined, allowed: readonly string[]): (o: unknown) => boolean {
  if (!sel) return () => true;
  const reqs = clauses(sel).map((c) => {
    const m = /^(.+?)(==|!=|=)(.*)$/.exec(c);
    if (!m) throw new SelectorError(`invalid selector: '${sel}'; can't understand '${c}'`);
    const f = m[1].trim();
    if (!allowed.includes(f)) throw new SelectorError(`field label not supported: ${f}`);
    const v = m[3].trim();
    return m[2] === '!=' ? (o: unknown) => at(o, f) !== v : (o: unknown) => at(o, f) === v;
  });
  return (o) => reqs.every((r) => r(o));
}
