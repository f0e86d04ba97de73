import Koa from 'koa';
import cors from '@koa/cors';
import type { Config } from '../base/config';
import type { Logger } from '../base/logger';
import { problemMiddleware } from './problems';

/** A Koa app with the pieces every service shares: problem rendering, request logging, proxy trust. */
export function baseApp(platform: { config: Config; logger: Logger }, options: { cors?: boolean } = {}): Koa {
  // Behind proxies, only the entries they appended are true: the client is the one TRUSTED_PROXY_HOPS from the right
  // (Koa keeps the last maxIpsCount entries and takes the first of them), never what the client wrote to the left.
  const app = new Koa({ proxy: platform.config.TRUST_PROXY, maxIpsCount: platform.config.TRUSTED_PROXY_HOPS });
  app.silent = true;
  if (options.cors)
    app.use(
      cors({
        origin: '*',
        allowMethods: ['POST'],
        exposeHeaders: ['Retry-After', 'Location'],
        allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Accept'],
        maxAge: 86400,
      }),
    );
  // Request lines are debug-level: at other levels, not even their fields are gathered.
  if (platform.logger.isLevelEnabled('debug')) {
    app.use(async (ctx, next) => {
      const started = performance.now();
      try {
        await next();
      } finally {
        if (ctx.path !== '/livez' && ctx.path !== '/readyz') {
          platform.logger.debug(
            { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) },
            'request',
          );
        }
      }
    });
  }
  app.use(problemMiddleware(platform.config.PROBLEMS_URL, platform.logger));
  return app;
}
