import { Router } from 'express';
import { invalid, notFound } from '../errors';
import { checkDnsLabel } from '../lib/names';
import { parseRfc3339 } from '../lib/rfc3339';
import type { FunctionProvider } from '../providers/function-provider';
import { namespaceOf } from './functions';

function parseQuery(q: Record<string, unknown>) {
  const name = checkDnsLabel(q.name, 'name');
  const namespace = namespaceOf(q.namespace);
  let tail: number | undefined;
  if (q.tail !== undefined && q.tail !== '') {
    // -1 is faas-cli's "all lines" (it sends it with --follow); any other negative is a mistake
    if (typeof q.tail !== 'string' || !/^(-1|\d{1,15})$/.test(q.tail)) {
      throw invalid('tail', `${JSON.stringify(q.tail)} must be a whole number of lines (or -1 for all)`);
    }
    tail = Number(q.tail);
  }
  let follow = false;
  if (q.follow !== undefined && q.follow !== '') {
    if (q.follow !== 'true' && q.follow !== 'false') throw invalid('follow', `${JSON.stringify(q.follow)} must be true or false`);
    follow = q.follow === 'true';
  }
  let since: Date | undefined;
  if (q.since !== undefined && q.since !== '') {
    const t = typeof q.since === 'string' ? parseRfc3339(q.since) : undefined;
    if (t === undefined) throw invalid('since', `${JSON.stringify(q.since)} is not an RFC3339 time`);
    if (t < 0) throw invalid('since', `"${q.since}" is before 1970-01-01T00:00:00Z`);
    since = new Date(t);
  }
  return { ref: { name, namespace }, tail, follow, since };
}

/** `/system/logs`: NDJSON lines `{name, namespace, instance, timestamp, text}`, optionally followed. */
export function logRoutes(provider: FunctionProvider): Router {
  const r = Router();
  r.get('/system/logs', async (req, res) => {
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    const q = parseQuery(req.query as Record<string, unknown>);
    if (!(await provider.get(q.ref))) throw notFound(`No such function: ${q.ref.name}`);
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    for await (const line of provider.logs(q.ref, { tail: q.tail, since: q.since, follow: q.follow, signal: ac.signal })) {
      if (ac.signal.aborted) break;
      res.write(JSON.stringify(line) + '\n');
    }
    res.end();
  });
  return r;
}
