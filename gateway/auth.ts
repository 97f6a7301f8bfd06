import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { AuthConfig } from './config';
import { ErrorCode, PlatformError } from './errors';

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** True when the Authorization header carries the configured Basic credentials. */
export function authorized(header: string | undefined, cfg: AuthConfig): boolean {
  if (!header) return false;
  const m = /^Basic\s+(\S+)$/i.exec(header.trim());
  if (!m) return false; // includes faas-cli's empty "Bearer " when no login exists
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return false;
  return same(decoded.slice(0, i), cfg.user) && same(decoded.slice(i + 1), cfg.password);
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
