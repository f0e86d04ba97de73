import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Type } from '@sinclair/typebox';
import { periodKey, problem, SLUG_PATTERN, toProblem } from '@intake/shared/contracts';
import { route } from '@intake/shared/http';
import type { IngestDeps } from '../compose';
import { ingestSubmission } from '../ingest';
import {
  Created,
  isFormNavigation,
  noteSubmissionOutcome,
  present,
  presentRefusal,
  Replay,
  Spam,
} from '../answer/answer';
import { requestOrigin, type BodyKind } from '../read/body';
import { LIMITS } from '../read/limits';

const Fields = Type.Record(Type.String(), Type.String(), {
  description:
    'Field names as sent. The honeypot field and the bot-challenge token are control fields, never stored: the ' +
    'token is read from `bot-challenge-response`, else from the provider widget’s own `cf-turnstile-response`, ' +
    '`h-captcha-response` or `g-recaptcha-response` (all four are stripped). `_subject` (the owner’s notification ' +
    'subject, one line, ≤ 200 characters), `_replyto` (its Reply-To, when one address) and `_next` (where a browser ' +
    'goes after a success, only an http(s) URL on an origin of the form’s `allowed_origins` or `redirect_url`; ' +
    'anything else is ignored) are control fields too: taken out of the payload, never sent to webhooks.',
});
const JsonFields = Type.Record(Type.String(), Type.Unknown(), {
  description: 'One object; non-string values are stored JSON-stringified. At most 32 levels deep, 1 MiB.',
});
const Multipart = Type.Object(
  {},
  {
    additionalProperties: Type.Union([Type.String(), Type.String({ contentEncoding: 'binary' })]),
    description: 'Fields and file parts; each file is streamed to storage and limited by the plan’s per-file size.',
  },
);

/** `POST /v1/f/:slug`: a form's post, in any of the three encodings a site sends. */
export const submitForm = route({
  method: 'POST',
  path: '/v1/f/:slug',
  operationId: 'submitForm',
  summary: 'Post a submission to a form',
  description:
    'Public and cross-origin. Optional `Authorization: Bearer svc_sub_...` (must be of the ' +
    'form’s account) and `Idempotency-Key` (remembered 24 hours per form). ' +
    'A browser’s plain form post (Accept prefers text/html, not fetch: `Sec-Fetch-Mode` navigate or absent) is ' +
    'answered with 303 to its `_next` (see the fields) or the form’s redirect_url, or a thank-you page; refused, with 303 to the redirect_url with ' +
    '`error=<problem slug>`, or a small HTML page in the problem’s status. API clients get the documents below.',
  tags: ['Ingest'],
  auth: 'none',
  params: Type.Object({
    slug: Type.String({ minLength: 1, maxLength: 64, pattern: SLUG_PATTERN, description: 'the form’s slug' }),
  }),
  notFound: 'form-not-found',
  requestBody: {
    required: false,
    content: {
      'application/x-www-form-urlencoded': { schema: Fields },
      'multipart/form-data': { schema: Multipart },
      'application/json': { schema: JsonFields },
    },
  },
  responses: {
    201: {
      description: 'Created (a browser’s plain form post without a redirect_url gets a thank-you page)',
      schema: Created,
      alternatives: { 'text/html': Type.String() },
    },
    200: {
      description:
        'Caught as spam (`{ ok, status: "accepted" }`), or a replayed Idempotency-Key (`idempotent_replay: true`)',
      schema: Type.Union([Spam, Replay]),
    },
    303: {
      description: 'A browser form post, sent on to its `_next` or the form’s redirect_url',
      headers: { Location: { description: 'the `_next` or the redirect_url', schema: Type.String() } },
      alternatives: { 'text/html': Type.String() },
    },
  },
  problems: [
    'bad-body',
    'quota-exceeded',
    'form-not-live',
    'origin-not-allowed',
    'invalid-key',
    'challenge-failed',
    'form-not-found',
    'file-too-large',
    'uploads-not-allowed',
    'body-too-large',
    'unsupported-media-type',
    'validation-failed',
    'rate-limited',
    'service-unavailable',
  ],
  problemAlternatives: { 'text/html': Type.String({ description: 'a browser’s refused form post: the reason' }) },
  async handler(ctx, { params }, deps: IngestDeps) {
    const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase();
    if (encoding !== 'identity') throw problem('unsupported-media-type', 'Compressed request bodies are not accepted');
    const kind = (ctx.request.is('urlencoded', 'multipart', 'json') || undefined) as BodyKind | undefined;
    const charset = ctx.request.charset;
    if (kind !== 'multipart' && charset && !/^(utf-?8|us-ascii)$/i.test(charset))
      throw problem('unsupported-media-type', 'Send the body in UTF-8');
    const length = ctx.get('content-length');
    try {
      const outcome = await ingestSubmission(deps, {
        slug: params.slug,
        ip: ctx.ip,
        authorization: ctx.get('authorization') || undefined,
        origin: requestOrigin(ctx.get('origin') || undefined, ctx.get('referer') || undefined),
        idempotencyKey: ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('idempotency-key'),
        req: ctx.req,
        kind,
        contentLength: length ? Number(length) : undefined,
        userAgent: ctx.get('user-agent') || undefined,
        referrer: ctx.get('referer') || undefined,
      });
      noteSubmissionOutcome(ctx, outcome);
      present(ctx, outcome);
    } catch (err) {
      const refused = toProblem(err);
      if (!refused || !isFormNavigation(ctx)) throw err;
      const form =
        refused.slug === 'form-not-found'
          ? undefined
          : await deps.formCache.get(params.slug, periodKey(deps.platform.clock.now())).catch(() => undefined);
      presentRefusal(ctx, refused, form);
    } finally {
      if (!ctx.req.complete)
        finishUnreadBody(ctx.req, ctx.get('content-length'), (name, value) => ctx.set(name, value));
    }
  },
});

/** A rest of a refused post this small is read and dropped rather than cut off. */
export const DRAIN_LIMIT_BYTES = 4 * LIMITS.bodyBytes;
/** How long a connection that closes after a refusal still takes what the client sends before it goes. */
export const LINGER_MS = 2000;

/**
 * A post answered before its whole body was read (refused early: too large, unknown form, rate limited, ...). Closing
 * at once while the client still sends makes the server's kernel answer its data with a reset, and the client's may
 * then drop the answer it had not read yet (ECONNRESET instead of the 413). So, as nginx's lingering close does: a
 * declared rest of a few megabytes is read and dropped and the connection stays usable; and a connection that closes
 * after the answer (a bigger or unknown rest, or the client asked to) ends our side first, then takes and drops what
 * still comes for up to LINGER_MS, and only then goes.
 */
export function finishUnreadBody(
  req: IncomingMessage,
  contentLength: string,
  setHeader: (name: string, value: string) => void,
): void {
  const declared = /^\d{1,12}$/.test(contentLength) ? Number(contentLength) : undefined;
  if (!req.destroyed && declared !== undefined && declared <= DRAIN_LIMIT_BYTES) req.resume();
  else setHeader('Connection', 'close');
  lingerOnClose(req);
}

/** Node closes a connection after its last answer with `destroySoon`: this one first lingers (see above). */
function lingerOnClose(req: IncomingMessage): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  if (socket.destroyed || typeof socket.destroySoon !== 'function') return;
  socket.destroySoon = function lingeringClose() {
    const gone = () => socket.destroy();
    const timer = setTimeout(gone, LINGER_MS);
    timer.unref();
    socket.once('end', () => {
      clearTimeout(timer);
      gone();
    });
    socket.on('error', () => undefined);
    socket.end();
    if (!req.destroyed) req.resume();
    socket.resume();
  };
}

/** Ingest's public routes. */
export const ingestRoutes = [submitForm];
