import type { NextFunction, Request, Response, Router } from 'express';

type Handler = (req: Request, res: Response, next: NextFunction) => unknown;

/**
 * Express 4 does not pass rejected promises to error middleware; this wraps every route handler
 * of a router so a thrown or rejected error reaches the error mapper.
 */
export function catchAsync(router: Router): Router {
  for (const layer of (router as unknown as { stack: Array<{ route?: { stack: Array<{ handle: Handler }> } }> }).stack) {
    for (const l of layer.route?.stack ?? []) {
      const h = l.handle;
      l.handle = (req, res, next) => {
        try {
          const p = h(req, res, next) as Promise<unknown> | undefined;
          if (p && typeof p.catch === 'function') p.catch(next);
        } catch (e) {
          next(e);
        }
      };
    }
  }
  return router;
}
