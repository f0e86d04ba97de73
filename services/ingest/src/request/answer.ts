import { Type, type Static } from '@sinclair/typebox';
import { escapeHtml } from '@intake/shared';
import type { Context } from 'koa';
import type { IngestOutcome } from '../ingest';

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
  ctx.body = THANK_YOU;
}

const THANK_YOU = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Thank you</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}</style></head>
<body><h1>Thank you</h1><p>Your submission has been received.</p><p><a href="javascript:history.back()">Go back</a></p></body></html>
`;
