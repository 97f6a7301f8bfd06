import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { AuthConfig } from './config';
import { ErrorCode, PlatformError } from './errors';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time string equality, also when the lengths differ (fixed-size digests compared). */
export function same(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** True when the Authorization header carries the configured Basic credentials. */
export function authorized(header: string | undefined, cfg: AuthConfig): boolean {
  if (!header) return false;
  const m = /^Basic\s+(\S+)$/i.exec(header.trim());
  if (!m) return false; // includes faas-cli's empty "Bearer " when no login exists
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return false;
  // both compared every time: which of the two was wrong takes the same time to find out
  const userOk = same(decoded.slice(0, i), cfg.user);
  const passOk = same(decoded.slice(i + 1), cfg.password);
  return userOk && passOk && cfg.password !== '';
}

/** Basic auth decorator for `/system/*` (OpenFaaS gateway behaviour); a no-op when disabled. */
export function basicAuth(cfg: AuthConfig) {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!cfg.enabled || authorized(req.headers.authorization, cfg)) return next();
    next(new PlatformError(ErrorCode.Unauthorized, 'unauthorized: run "faas-cli login" with the gateway credentials', undefined, {
      'WWW-Authenticate': 'Basic realm="mlfaas"',
    }));
  };
}

/**
 * Refuses browser requests from other origins: a web page must not drive the control plane
 * (deploy a function, read secrets) through the user's browser. Requests without `Origin`
 * (faas-cli, curl, the CLI) pass; `Origin: null` (sandboxed frames, file://) does not.
 */
export function sameOriginOnly(allowed: (origin: string) => boolean) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    if (origin === undefined || allowed(origin)) return next();
    next(new PlatformError(ErrorCode.Forbidden, `cross-origin request from ${origin} refused: the control plane only answers its own origin`, 'Origin'));
  };
}

/** The gateway's own origins: its listen address, and loopback names for it. */
export function ownOrigins(host: string, port: number, extra: string[] = []): Set<string> {
  const names = new Set([host, '127.0.0.1', 'localhost', '[::1]']);
  if (host === '0.0.0.0' || host === '::') names.delete(host);
  return new Set([...[...names].map((n) => `http://${n}:${port}`), ...extra.map((o) => o.replace(/\/$/, ''))]);
}

/**
 * `/system/*` bodies are JSON, and only JSON: a cross-site form (`text/plain`,
 * `application/x-www-form-urlencoded`, `multipart/form-data`) gets 415 before any parsing.
 */
export function jsonBodiesOnly(req: Request, _res: Response, next: NextFunction) {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (!hasBody || req.is(['application/json', 'application/*+json'])) return next();
  next(
    new PlatformError(
      ErrorCode.UnsupportedMediaType,
      `request bodies must be application/json (got ${req.headers['content-type'] ?? 'no Content-Type'})`,
      'Content-Type',
    ),
  );
}
