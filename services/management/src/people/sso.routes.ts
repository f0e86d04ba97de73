import type Koa from 'koa';
import { sessionCookie } from '@intake/shared/auth';
import { clientOf } from '@intake/shared/audit';
import { escapeHtml } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { finishSso, SSO_COOKIE, SSO_PATHS, SSO_TTL_MS, ssoConfigured, SsoRefusal, startSso } from './sso';
import { consoleCsp, safetyHeaders } from '../platform/console-page';
import { secure } from './sessions.routes';

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a}' +
  'a{color:#0b57d0}';

/** Largest form body the start accepts (an invitation token is ~43 characters). */
const MAX_FORM_BYTES = 2048;

/**
 * Single sign-on's browser endpoints, beside the console (pages and redirects, not API routes, so outside the
 * OpenAPI): `GET /console/auth/login` starts a sign-in, `POST` the same with a form field `invitation` joins an
 * invitation with SSO, `GET /console/auth/callback` is the redirect URI. Mounted before the console page, which
 * would otherwise answer every `/console/*`.
 */
export function mountSso(app: Koa, platform: Platform): void {
  const csp = consoleCsp(platform.config.PUBLIC_BASE_URL, { styles: [STYLE] });
  const pages = { csp, secure: (ctx: Koa.Context) => secure(ctx, platform.config.PUBLIC_BASE_URL) };
  app.use(async (ctx, next) => {
    const start = ctx.path === SSO_PATHS.start && (ctx.method === 'GET' || ctx.method === 'POST');
    const callback = ctx.path === SSO_PATHS.callback && ctx.method === 'GET';
    if (!start && !callback) return next();
    ctx.set('Cache-Control', 'no-store');
    try {
      if (!ssoConfigured(platform.config))
        throw new SsoRefusal(404, 'Single sign-on is not set up', 'This Intake has no identity provider configured.');
      if (start) await begin(ctx, platform, pages);
      else await complete(ctx, platform, pages);
    } catch (err) {
      if (!(err instanceof SsoRefusal)) platform.logger.error({ err }, 'single sign-on failed');
      const refusal =
        err instanceof SsoRefusal ? err : new SsoRefusal(500, 'Sign-in failed', 'Something went wrong on our side.');
      page(ctx, pages.csp, refusal.status, refusal.title, refusal.detail);
    }
  });
}

interface Pages {
  csp: string;
  secure(ctx: Koa.Context): boolean;
}

function flowCookie(value: string | undefined, secureCookie: boolean): string {
  // Lax, not Strict: it must come back with the provider's cross-site redirect to the callback.
  const parts = [
    `${SSO_COOKIE}=${value ?? ''}`,
    'Path=/console/auth',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${value ? SSO_TTL_MS / 1000 : 0}`,
  ];
  if (secureCookie) parts.push('Secure');
  return parts.join('; ');
}

async function begin(ctx: Koa.Context, platform: Platform, pages: Pages): Promise<void> {
  let invitation: string | undefined;
  if (ctx.method === 'POST') {
    // A page elsewhere must not start a join in this browser.
    if (ctx.get('sec-fetch-site') === 'cross-site' || (ctx.get('origin') && ctx.get('origin') !== ctx.origin))
      throw new SsoRefusal(403, 'Not from this site', 'Start joining from the invitation link.');
    invitation = new URLSearchParams(await readForm(ctx)).get('invitation')?.slice(0, 200) || undefined;
  }
  const { location, sealed } = await startSso(platform, invitation);
  ctx.set('Set-Cookie', flowCookie(sealed, pages.secure(ctx)));
  if (ctx.method === 'GET') {
    ctx.status = 303;
    return ctx.redirect(location);
  }
  // The console's CSP (form-action 'self') would stop a form post's redirect to the provider; a page of ours may go.
  const next = { href: location, label: 'Continue to your identity provider' };
  page(ctx, pages.csp, 200, 'Joining with SSO', 'Taking you to your identity provider…', next);
}

async function readForm(ctx: Koa.Context): Promise<string> {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw new SsoRefusal(415, 'Not a form', 'Start joining from the invitation link.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new SsoRefusal(413, 'Too large', 'Start joining from the invitation link.');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function complete(ctx: Koa.Context, platform: Platform, pages: Pages): Promise<void> {
  // The flow cookie is spent whatever happens: a callback is never completed twice.
  ctx.set('Set-Cookie', flowCookie(undefined, pages.secure(ctx)));
  const opened = await finishSso({
    platform,
    query: new URLSearchParams(ctx.querystring),
    sealed: ctx.cookies.get(SSO_COOKIE),
    client: clientOf(ctx),
  });
  ctx.set('Set-Cookie', [flowCookie(undefined, pages.secure(ctx)), sessionCookie(opened.token, pages.secure(ctx))]);
  // This answer ends the provider's cross-site redirect chain, on which the SameSite=Strict session cookie is not
  // sent; the console opens from here by a navigation of our own page, on which it is.
  page(ctx, pages.csp, 200, 'Signed in', 'Opening the console…', {
    href: '/console',
    label: 'Continue to the console',
  });
}

/** Element text: only `&`, `<` and `>` matter there (an apostrophe stays one, for a reader of the raw page). */
const text = (s: string) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c] as string);

/** A page of text (everything escaped), optionally moving on at once to `next` by a navigation of its own. */
function page(
  ctx: Koa.Context,
  csp: string,
  status: number,
  title: string,
  detail: string,
  next?: { href: string; label: string },
): void {
  safetyHeaders(ctx, csp);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  const refresh = next ? `<meta http-equiv="refresh" content="0;url=${escapeHtml(next.href)}">` : '';
  const link = next
    ? `<p><a href="${escapeHtml(next.href)}">${text(next.label)}</a></p>`
    : '<p><a href="/console">Back to sign-in</a></p>';
  ctx.body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8">${refresh}` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${text(title)} · Intake</title><style>${STYLE}</style></head>` +
    `<body><main><h1>${text(title)}</h1><p>${text(detail)}</p>${link}</main></body></html>`;
}
