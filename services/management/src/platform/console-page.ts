import { createHash } from 'node:crypto';
import { readFileSync, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type Koa from 'koa';
import type { KoaRouter } from '@intake/shared/http';
import type { Platform } from '@intake/shared/runtime';

/** Where the console package (`@intake/console`) builds its static files: its dist/, found through the package. */
export const CONSOLE_DIR = path.join(path.dirname(require.resolve('@intake/console/package.json')), 'dist');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};

/**
 * The console's Content-Security-Policy: nothing inline, nothing from elsewhere, never framed. A page of our own
 * that carries its script or style inline (`/docs`, the problem pages) names exactly those by their SHA-256, so
 * nothing else inline runs.
 */
export function consoleCsp(publicBaseUrl: string, inline: { scripts?: string[]; styles?: string[] } = {}): string {
  const files = new URL(publicBaseUrl).origin;
  const hashes = (texts: string[] = []) =>
    texts.map((text) => ` 'sha256-${createHash('sha256').update(text).digest('base64')}'`).join('');
  return [
    "default-src 'self'",
    `script-src 'self'${hashes(inline.scripts)}`,
    `style-src 'self'${hashes(inline.styles)}`,
    `img-src 'self' ${files}`,
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Sends `body` compressed with the best encoding the client accepts (br, then gzip), compressing each file once per
 * encoding and keeping the result (the console's files are few, and a hashed asset never changes). Small bodies go
 * as they are. `Vary: Accept-Encoding` either way, so a cache never hands one client's encoding to another.
 */
function compressed(cache: Map<string, Promise<Buffer>>) {
  return async (ctx: Koa.Context, key: string, body: Buffer): Promise<Buffer> => {
    ctx.vary('Accept-Encoding');
    const encoding = body.length < 1024 ? undefined : ctx.acceptsEncodings('br', 'gzip', 'identity');
    if (encoding !== 'br' && encoding !== 'gzip') return body;
    const cacheKey = `${encoding}:${key}`;
    let done = cache.get(cacheKey);
    if (!done) {
      done =
        encoding === 'br'
          ? brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } })
          : gzip(body, { level: 9 });
      cache.set(cacheKey, done);
      done.catch(() => cache.delete(cacheKey));
    }
    const out = await done;
    ctx.set('Content-Encoding', encoding);
    return out;
  };
}

/** The console's safety headers on any page or asset: its CSP, no framing, no sniffing, no referrer. */
export function safetyHeaders(ctx: Koa.Context, csp: string): void {
  ctx.set('Content-Security-Policy', csp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  ctx.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=()');
}

/**
 * `/console` (and every path under it: the console routes in the browser) serves the built page
 * with `no-cache`; `/console/assets/<name>-<hash>.<ext>` serves hashed files cached for a year;
 * `/` redirects to `/console`. A middleware, not API routes: these are pages, outside the OpenAPI.
 */
export function mountConsole(app: Koa, _router: KoaRouter, platform: Platform, dir: string = CONSOLE_DIR): void {
  const csp = consoleCsp(platform.config.PUBLIC_BASE_URL);
  const encode = compressed(new Map());
  let page: Buffer | undefined;
  const indexHtml = () => {
    if (page === undefined && existsSync(path.join(dir, 'index.html')))
      page = readFileSync(path.join(dir, 'index.html'));
    return page;
  };
  const serveAsset = async (ctx: Koa.Context, name: string) => {
    const type = TYPES[path.extname(name)];
    if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith('.') || !type) return false;
    const body = await readFile(path.join(dir, 'assets', name)).catch(() => undefined);
    if (!body) return false;
    safetyHeaders(ctx, csp);
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.type = type;
    ctx.body = await encode(ctx, name, body);
    return true;
  };
  const servePage = async (ctx: Koa.Context) => {
    const html = indexHtml();
    safetyHeaders(ctx, csp);
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    if (html === undefined) {
      ctx.status = 503;
      ctx.body =
        '<!doctype html><title>Intake console</title><p>The console is not built: run <code>npm run build</code>.</p>';
      return;
    }
    ctx.body = await encode(ctx, 'index.html', html);
  };
  app.use(async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === '/') return ctx.redirect('/console');
    if (ctx.path.startsWith('/console/assets/')) {
      if (!(await serveAsset(ctx, ctx.path.slice('/console/assets/'.length)))) return next();
      return;
    }
    if (ctx.path === '/console' || ctx.path.startsWith('/console/')) return servePage(ctx);
    return next();
  });
}
