import express, { NextFunction, Request, Response } from 'express';
import { basicAuth, jsonBodiesOnly, sameOriginOnly } from './auth';
import { Config } from './config';
import { ErrorCode, PlatformError, toHttp } from './errors';
import { paramDecodeError } from './http-edge';
import { catchAsync } from './lib/catch-async';
import { checkRedis } from './lib/redis-health';
import type { GatewayMetrics } from './metrics/gateway-metrics';
import type { FunctionProvider } from './providers/function-provider';
import type { Registry } from './registry/registry';
import { functionRoutes } from './routes/functions';
import { infoRoutes } from './routes/info';
import { logRoutes } from './routes/logs';
import { secretRoutes } from './routes/secrets';
import { ScalingEvents } from './registry/scaling-events';
import { overviewFromStatus, uiRoutes } from './routes/ui';
import { OverviewLike, UiStreamHub } from './routes/ui-stream';

export interface AppDeps {
  cfg: Config;
  provider: FunctionProvider;
  registry: Registry;
  metrics: GatewayMetrics;
  /** Extra `/system/*` routers added by later subsystems (scaling events, jobs). */
  extra?: express.Router[];
  /** Origins a browser may call `/system/*` from (the gateway's own); read per request (port 0). */
  origins: () => Set<string>;
  /** Facts for `/system/info` beyond OpenFaaS's fields (isolation, auth). */
  info?: Record<string, unknown>;
  /** The dashboard's overview source (`/system/overview`'s builder); without it, the function list alone. */
  overview?: () => Promise<OverviewLike>;
  /** Told the dashboard's stream hub, so shutdown can end its streams. */
  onHub?: (hub: UiStreamHub) => void;
}

/** The Express app for everything except the `/function/*` and `/async-function/*` hot paths. */
export function buildApp(d: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // 200 only while the store answers: a gateway without Redis can serve nothing but cached routes
  app.get('/healthz', async (_req, res) => {
    const r = await checkRedis(d.registry.redis, 1000);
    if (r.ok) res.status(200).send('OK');
    else {
      const message = `redis unavailable: ${r.reason}`;
      res.status(503).set('Retry-After', '5').json({ status: 'unavailable', redis: 'down', error: { code: ErrorCode.Unavailable, message } });
    }
  });
  app.get('/metrics', async (_req, res) => {
    res.set('Content-Type', d.metrics.registry.contentType).send(await d.metrics.registry.metrics());
  });
  const events = new ScalingEvents(d.registry.redis);
  const hub = new UiStreamHub({
    overview: d.overview ?? (async () => overviewFromStatus(await d.provider.list())),
    scalingEvents: (ref, limit) => events.list(ref, limit),
  });
  d.onHub?.(hub);
  app.use(catchAsync(uiRoutes({ auth: d.cfg.auth, origins: d.origins, hub })));
  app.use('/system', sameOriginOnly((origin) => d.origins().has(origin)), basicAuth(d.cfg.auth), jsonBodiesOnly);
  app.use(express.json({ limit: d.cfg.maxBodyBytes, strict: false, type: () => true }));
  for (const r of [
    infoRoutes(d.provider, d.cfg.version, d.info),
    functionRoutes(d.provider, d.registry, new ScalingEvents(d.registry.redis)),
    secretRoutes(d.provider),
    logRoutes(d.provider),
    ...(d.extra ?? []),
  ]) {
    app.use(catchAsync(r));
  }
  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new PlatformError(ErrorCode.NotFound, `no route for ${req.method} ${req.path}`));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const h = toHttp(paramDecodeError(err, req.path));
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(h.status).set(h.headers).json(h.body);
  });
  return app;
}
