import { Type, type Static } from '@sinclair/typebox';
import { toProblem, type Problem, type VisitorPages } from '@intake/shared/contracts';
import { recordSubmission, type SubmissionOutcome } from '@intake/shared/telemetry';
import { escapeHtml } from '@intake/shared/http';
import type { Context, Next } from 'koa';
import type { IngestOutcome } from '../ingest';
import { refusedPage, thankYouPage } from './visitor-words';

/** The answers of `POST /v1/f/:slug` (documented in the OpenAPI by the route). */
export const Created = Type.Object({
  id: Type.String({ description: '`sub_...`' }),
  received_at: Type.String({ format: 'date-time' }),
  status: Type.Literal('received'),
  files: Type.Integer({ minimum: 0 }),
});
export const Spam = Type.Object({ ok: Type.Literal(true), status: Type.Literal('accepted') });
export const Replay = Type.Object({
  id: Type.String(),
  status: Type.Literal('received'),
  idempotent_replay: Type.Literal(true),
});

/** A plain HTML form post from a browser (it asks for HTML and sends a form content type), as opposed to an API client. */
export function wantsHtml(ctx: Context): boolean {
  return Boolean(ctx.request.is('urlencoded', 'multipart')) && ctx.accepts('json', 'html') === 'html';
}

/**
 * A post that a browser navigates with from an HTML form: a form body, Accept preferring HTML, and no fetch or XHR
 * (`Sec-Fetch-Mode: navigate`, or no such header from a browser too old to send it). A script's fetch() gets the
 * problem document whatever it accepts.
 */
export function isFormNavigation(ctx: Context): boolean {
  const mode = ctx.get('sec-fetch-mode');
  return wantsHtml(ctx) && (mode === '' || mode === 'navigate');
}

/**
 * A refused form post from a browser, so the visitor never reads raw JSON: when the owner set a `redirect_url`, 303
 * to it with `error=<problem slug>` (their page says what it wants); otherwise a small page in the problem's own status
 * (and headers, e.g. Retry-After) with the reason and a link back: to the page the form was on, with what the
 * visitor typed (history), else to the `Referer` (browsers send only the origin of another site's page).
 */
export function presentRefusal(
  ctx: Context,
  refused: Problem,
  form: { redirect_url: string | null; pages: VisitorPages | null } | undefined,
): void {
  const redirectUrl = form?.redirect_url;
  ctx.set('Cache-Control', 'no-store');
  for (const [name, value] of Object.entries(refused.headers)) ctx.set(name, value);
  ctx.type = 'text/html; charset=utf-8';
  if (redirectUrl && /^https?:\/\//i.test(redirectUrl)) {
    const to = new URL(redirectUrl);
    to.searchParams.set('error', refused.slug);
    ctx.status = 303;
    ctx.set('Location', to.href);
    ctx.body = `<!doctype html><meta charset="utf-8"><title>Not sent</title><p><a href="${escapeHtml(to.href)}">Continue</a></p>\n`;
    return;
  }
  const referer = ctx.get('referer');
  const back = /^https?:\/\//i.test(referer) ? escapeHtml(referer) : 'javascript:history.back()';
  ctx.status = refused.status;
  ctx.body = refusedPage(ctx, form?.pages, refused, back);
}

/** The spec's JSON answers; for a browser's form post, 303 to the form's redirect_url or a small thank-you page. */
export function present(ctx: Context, outcome: IngestOutcome): void {
  const json: { status: 200 | 201; body: Static<typeof Created> | Static<typeof Spam> | Static<typeof Replay> } =
    outcome.kind === 'created'
      ? {
          status: 201,
          body: { id: outcome.id, received_at: outcome.receivedAt, status: 'received', files: outcome.files },
        }
      : outcome.kind === 'spam' || (outcome.kind === 'replay' && outcome.spam)
        ? // A replayed spam post gets the same benign answer as the first one: nothing tells a bot it was caught.
          { status: 200, body: { ok: true, status: 'accepted' } }
        : { status: 200, body: { id: outcome.id, status: 'received', idempotent_replay: true } };
  ctx.set('Cache-Control', 'no-store');
  if (!wantsHtml(ctx)) {
    ctx.status = json.status;
    ctx.body = json.body;
    return;
  }
  if (outcome.redirectUrl && /^https?:\/\//i.test(outcome.redirectUrl)) {
    ctx.status = 303;
    ctx.set('Location', outcome.redirectUrl);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body =
      '<!doctype html><meta charset="utf-8"><title>Thank you</title>' +
      `<p>Thank you. <a href="${escapeHtml(outcome.redirectUrl)}">Continue</a></p>\n`;
    return;
  }
  ctx.status = json.status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = thankYouPage(ctx, outcome.pages);
}

/** Where the submit handler leaves how the post ended, for the metrics middleware. */
const OUTCOME = 'submissionOutcome';

/**
 * A replayed Idempotency-Key counts as what the first post was (received or spam): the client gets
 * that answer again, and the dashboard's "refused or spam" share stays about refusals.
 */
export function noteSubmissionOutcome(ctx: Context, outcome: IngestOutcome): void {
  const spam = outcome.kind === 'spam' || (outcome.kind === 'replay' && outcome.spam);
  ctx.state[OUTCOME] = (spam ? 'spam' : 'received') satisfies SubmissionOutcome;
}

/**
 * Records `intake.submissions` and `intake.ingest.duration` for every form post
 * (`POST /v1/f/:slug`): the outcome the handler noted, or the slug of the problem the post was
 * refused with (an unexpected error counts as `internal-error`). Runs inside the problem
 * middleware, so it sees the error before it is rendered; other requests pass straight through.
 */
export async function submissionMetrics(ctx: Context, next: Next): Promise<void> {
  if (ctx.method !== 'POST' || !ctx.path.startsWith('/v1/f/')) return next();
  const started = performance.now();
  let outcome: SubmissionOutcome | undefined;
  try {
    await next();
    outcome = ctx.state[OUTCOME] as SubmissionOutcome | undefined;
  } catch (err) {
    outcome = toProblem(err)?.slug ?? 'internal-error';
    throw err;
  } finally {
    // No outcome: no route answered (a path with no form slug), which is not a form post.
    if (outcome) recordSubmission({ outcome, seconds: (performance.now() - started) / 1000 });
  }
}
