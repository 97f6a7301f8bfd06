import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import express, { Request, Response } from 'express';
import { basicAuth, sameOriginOnly } from '../auth';
import type { AuthConfig } from '../config';
import { ErrorCode, PlatformError } from '../errors';
import type { FunctionStatus } from '../providers/function-provider';
import { OverviewLike, UiStreamHub } from './ui-stream';

/** The only files served: by extension, with their type. Anything else under ui/ is a 404. */
export const UI_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
};

/** The repository's `ui/` folder (this file is gateway/routes/ui.ts). */
export const DEFAULT_UI_ROOT = resolve(__dirname, '..', '..', 'ui');

/**
 * The file under `root` that a request path below `/ui/` names, or undefined when it names none we
 * serve: `..` and encoded separators never leave `root`, dot-files and unknown types are refused.
 */
export function uiFile(root: string, rel: string): string | undefined {
  let p: string;
  try {
    p = decodeURIComponent(rel);
  } catch {
    return undefined;
  }
  if (p === '' || p.endsWith('/')) p += 'index.html';
  if (p.includes('\0') || p.includes('\\')) return undefined;
  const parts = p.split('/').filter((s) => s !== '');
  if (parts.some((s) => s === '..' || s.startsWith('.'))) return undefined;
  if (!(extname(p) in UI_TYPES)) return undefined;
  const base = resolve(root);
  const file = resolve(join(base, ...parts));
  return file.startsWith(base + sep) ? file : undefined;
}

export interface UiRouteDeps {
  auth: AuthConfig;
  /** The gateway's own origins (the same check as `/system`). */
  origins: () => Set<string>;
  hub: UiStreamHub;
  root?: string;
}

/**
 * `/ui/`: the dashboard's static files and its live stream, behind `/system`'s basic auth (a 401
 * with `WWW-Authenticate`, so the browser asks) and, for `/ui/api/*`, its same-origin guard.
 */
export function uiRoutes(d: UiRouteDeps): express.Router {
  const root = d.root ?? DEFAULT_UI_ROOT;
  const r = express.Router({ strict: true });
  r.use('/ui', basicAuth(d.auth));
  r.use('/ui/api', sameOriginOnly((origin) => d.origins().has(origin)));
  r.get('/ui/api/stream', d.hub.handle);
  r.all('/ui/api/*', (req: Request) => {
    throw new PlatformError(ErrorCode.NotFound, `no route for ${req.method} ${req.path}`);
  });
  r.get('/ui', (_req, res) => res.redirect(301, '/ui/'));
  r.get('/ui/*', async (req: Request, res: Response) => {
    const file = uiFile(root, req.path.slice('/ui/'.length));
    const st = file ? await stat(file).catch(() => undefined) : undefined;
    if (!file || !st?.isFile()) throw new PlatformError(ErrorCode.NotFound, `no dashboard file ${req.path}`);
    res.status(200).set({
      'Content-Type': UI_TYPES[extname(file)],
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
    }).send(await readFile(file));
  });
  return r;
}

/**
 * Until `/system/overview` is wired in: what the function list alone says (no rates or latencies:
 * fields without a source are left out, as the contract asks).
 */
export function overviewFromStatus(list: FunctionStatus[], now = new Date()): OverviewLike & Record<string, unknown> {
  return {
    at: now.toISOString(),
    functions: list.map((f) => ({
      name: f.name,
      namespace: f.namespace,
      kind: f.kind,
      image: f.image,
      replicas: { ready: f.availableReplicas, desired: f.replicas },
    })),
    jobs: [],
  };
}
