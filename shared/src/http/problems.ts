import type { Context, Next } from 'koa';
import type { Logger } from '../base/logger';
import { problem, toProblem, type Problem } from '../contracts/problems';

/** Writes a problem document as the answer: its status, headers and application/problem+json body. */
export function writeProblem(ctx: Context, p: Problem, problemsUrl: string): void {
  ctx.status = p.status;
  for (const [name, value] of Object.entries(p.headers)) ctx.set(name, value);
  ctx.body = p.toJSON(problemsUrl);
  ctx.type = 'application/problem+json';
}

/** Koa middleware rendering every thrown error as a problem document; unknown errors become a logged 500 with no internals. */
export function problemMiddleware(problemsUrl: string, logger: Logger) {
  return async function renderProblems(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw problem('not-found', `Nothing is served at ${ctx.method} ${ctx.path}`);
      if (ctx.status === 405 && (ctx.body === undefined || typeof ctx.body === 'string')) {
        throw problem('method-not-allowed', `${ctx.method} is not allowed on ${ctx.path}`);
      }
      // The router's 501 for a method it implements nowhere (TRACE, ...): 405 with Allow where the path exists.
      if (ctx.status === 501 && (ctx.body === undefined || typeof ctx.body === 'string')) {
        const allow = ctx.response.get('Allow');
        if (!allow) {
          ctx.remove('Allow');
          throw problem('not-found', `Nothing is served at ${ctx.method} ${ctx.path}`);
        }
        throw problem('method-not-allowed', `${ctx.method} is not allowed on ${ctx.path}`);
      }
    } catch (err) {
      const known = toProblem(err);
      if (known) {
        if (known.status >= 500) logger.warn({ err, path: ctx.path }, 'request failed: %s', known.slug);
        writeProblem(ctx, known, problemsUrl);
        return;
      }
      logger.error({ err, method: ctx.method, path: ctx.path }, 'unhandled error');
      writeProblem(ctx, problem('internal-error', 'Something went wrong on our side; it has been logged'), problemsUrl);
    }
  };
}
