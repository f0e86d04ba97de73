import { Agent, buildConnector, request } from 'undici';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { inActiveSpan, type AttemptOutcome } from '@intake/shared/telemetry';
import {
  guardedLookup,
  isBlockedAddress,
  isChatFormat,
  signedRequest,
  urlRefusal,
  type SignedRequestProps,
} from '@intake/shared/webhooks';

/*
 * The send path's attempt at a webhook: one signed POST (its bytes and signatures from signedRequest in
 * @intake/shared), through an agent that refuses private addresses, timed, inside a CLIENT span. An integration's
 * attempt goes through ../integrations instead (see `attempt` in deliver.ts).
 */

/** How much of a receiver's answer is kept in the delivery log. */
export const RESPONSE_BODY_LIMIT = 1024;

export interface AttemptResult {
  ok: boolean;
  /** How it ended, as the metrics and the span report it (success, http_error, timeout, network_error, blocked). */
  outcome: AttemptOutcome;
  /** The receiver's status code; null when it never answered (network error, timeout, refused target). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  startedAt: Date;
  /**
   * The first RESPONSE_BODY_LIMIT bytes of the answer; null when the answer may have come from a private address
   * (allowed only with WEBHOOK_ALLOW_PRIVATE_NETWORKS): the delivery log, which every viewer reads, never shows what
   * a service inside our network said.
   */
  responseBody: string | null;
  /** How long the receiver asked us to wait before the next attempt (its `Retry-After` on a 429 or 503). */
  retryAfterMs?: number;
}

/** Times an attempt begun at `startedAt` (a webhook's or an integration's): `done(result)` adds its start and duration. */
export function timeAttempt(startedAt: Date) {
  const started = performance.now();
  return (partial: Omit<AttemptResult, 'durationMs' | 'startedAt'>): AttemptResult => ({
    ...partial,
    startedAt,
    durationMs: Math.round(performance.now() - started),
  });
}

/**
 * The HTTP client for webhooks: bounded timeouts, no redirects, and (unless private networks are allowed) a lookup
 * that refuses private addresses. It notes the address each of its connections reached, by origin, so an attempt
 * knows whether its answer may have come from inside our network (see `answersOnlyFromPublicAddresses`).
 */
export class WebhookAgent extends Agent {
  readonly #peers: Map<string, 'public' | 'private'>;

  constructor(props: { allowPrivateNetworks: boolean; timeoutMs: number }) {
    const peers = new Map<string, 'public' | 'private'>();
    const connect = buildConnector({
      timeout: props.timeoutMs,
      ...(props.allowPrivateNetworks ? {} : { lookup: guardedLookup as never }),
    });
    super({
      // The attempt's own deadline (lagTolerantTimeout) decides; these only bound a stuck socket.
      headersTimeout: props.timeoutMs + 1000,
      bodyTimeout: props.timeoutMs + 1000,
      connectTimeout: props.timeoutMs,
      keepAliveTimeout: 4000,
      connect: (options, callback) =>
        connect(options, (...result) => {
          const socket = result[1];
          if (socket) notePeer(peers, originKey(options), socket.remoteAddress);
          callback(...result);
        }),
    });
    this.#peers = peers;
  }

  /**
   * True when every connection this agent made to `url`'s origin reached a public address. False for an origin it
   * has not connected to, and for good once one of its connections reached a private one (a name that resolves
   * now outside, now inside our network counts as inside).
   */
  answersOnlyFromPublicAddresses(url: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    return this.#peers.get(originKey(parsed)) === 'public';
  }
}

/** Origins remembered per agent; past this the record starts again (an origin not in it counts as private). */
const PEER_ORIGINS_KEPT = 10_000;

function notePeer(peers: Map<string, 'public' | 'private'>, origin: string, address: string | undefined): void {
  if (peers.get(origin) === 'private') return;
  if (peers.size >= PEER_ORIGINS_KEPT) peers.clear();
  peers.set(origin, address !== undefined && !isBlockedAddress(address) ? 'public' : 'private');
}

/** An origin as undici's connector and a parsed URL both name it. */
function originKey(u: { protocol: string; hostname: string; port: string | number | null | undefined }): string {
  return `${u.protocol}//${u.hostname}:${u.port || (u.protocol === 'http:' ? 80 : 443)}`;
}

export function createWebhookAgent(props: { allowPrivateNetworks: boolean; timeoutMs: number }): WebhookAgent {
  return new WebhookAgent(props);
}

export interface SendProps extends SignedRequestProps {
  agent: WebhookAgent;
  url: string;
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  /** For the span only. */
  webhookId?: string;
}

/**
 * Makes one webhook attempt and reports what happened; never throws. Any 2xx is success;
 * another status, a network error, a refused target or no answer within `timeoutMs` is a failure.
 * Redirects are not followed (a 3xx is a failure). The attempt is a CLIENT span, and carries
 * its `traceparent` to the receiver (see span.ts).
 */
export function sendWebhook(props: SendProps): Promise<AttemptResult> {
  return withWebhookSpan(props, (traceHeaders) => attemptOnce(props, traceHeaders));
}

async function attemptOnce(props: SendProps, traceHeaders: Record<string, string>): Promise<AttemptResult> {
  const done = timeAttempt(props.now);
  const refusal = urlRefusal(props.url, props.allowPrivateNetworks);
  if (refusal)
    return done({
      ok: false,
      outcome: 'blocked',
      statusCode: null,
      error: `refused: the URL ${refusal}`,
      responseBody: null,
    });
  const { body, headers } = signedRequest(props);
  const deadline = lagTolerantTimeout(props.timeoutMs);
  try {
    const res = await request(props.url, {
      method: 'POST',
      headers: { ...traceHeaders, ...headers },
      body,
      dispatcher: props.agent,
      signal: deadline.signal,
    });
    const excerpt = await readLimited(res.body, RESPONSE_BODY_LIMIT);
    const responseBody = props.agent.answersOnlyFromPublicAddresses(props.url) ? excerpt : null;
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    const wait =
      res.statusCode === 429 || res.statusCode === 503
        ? retryAfterMs(res.headers['retry-after'], new Date())
        : undefined;
    return done({
      ok,
      outcome: ok ? 'success' : 'http_error',
      statusCode: res.statusCode,
      error: ok ? null : `receiver answered ${res.statusCode}`,
      responseBody,
      ...(wait !== undefined ? { retryAfterMs: wait } : {}),
    });
  } catch (err) {
    return done({ ok: false, statusCode: null, ...describeError(err, props.timeoutMs), responseBody: null });
  } finally {
    deadline.clear();
  }
}

/**
 * An abort signal for the attempt's timeout that does not count the time this process could not
 * run. A process starved of CPU runs its timers late (and may even write the request late); a
 * plain timeout would then fail an attempt the receiver answered in time, and its retry would be
 * a duplicate with no crash. When the timer fires late, the deadline moves by that lateness (at
 * most half the timeout in all, so an attempt stays within its lease of twice the timeout), and
 * the abort itself waits for the I/O already received (the poll phase runs before setImmediate).
 */
function lagTolerantTimeout(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const maxExtra = ms / 2;
  let extra = 0;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const arm = (delay: number): void => {
    const due = Date.now() + delay;
    timer = setTimeout(() => {
      const late = Date.now() - due;
      if (late > 10 && extra < maxExtra) {
        const more = Math.min(late, maxExtra - extra);
        extra += more;
        return arm(more);
      }
      immediate = setImmediate(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')));
    }, delay);
  };
  arm(ms);
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    },
  };
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) break;
    }
  } catch {
    // a body cut short still leaves what was read
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function describeError(err: unknown, timeoutMs: number): { outcome: AttemptOutcome; error: string } {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    cause?: { name?: string; code?: string; message?: string };
  };
  const inner = e.cause ?? e;
  if (inner.name === 'BlockedTargetError' || e.name === 'BlockedTargetError')
    return { outcome: 'blocked', error: `refused: ${inner.message ?? e.message}` };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || /Timeout/i.test(String(e.code ?? inner.code ?? '')))
    return { outcome: 'timeout', error: `no answer within ${timeoutMs} ms` };
  return {
    outcome: 'network_error',
    error: `${inner.code ?? e.code ?? 'network error'}: ${inner.message ?? e.message ?? String(err)}`,
  };
}

/** The longest wait a receiver's `Retry-After` may ask for; a longer one is held to this. */
const RETRY_AFTER_MAX_MS = 3_600_000;

/**
 * What a `Retry-After` header asks for, in milliseconds from `now` (RFC 9110: seconds, or an HTTP date), at most
 * RETRY_AFTER_MAX_MS; undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | string[] | null | undefined, now: Date): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now.getTime();
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), RETRY_AFTER_MAX_MS);
}

// The span of a webhook request.

/**
 * Telemetry of one outgoing webhook request. undici is not auto-instrumented, so the sender opens
 * this CLIENT span itself, named and attributed by the OpenTelemetry HTTP client conventions.
 */
const tracer = trace.getTracer('intake-webhooks');

/** What a query value is replaced with in `url.full`. */
export const REDACTED = 'REDACTED';

/**
 * The URL as it may appear in telemetry: no user:password, every query value replaced by
 * `REDACTED` (receivers' tokens often ride in the query). The path is kept (it identifies the
 * endpoint), except a chat webhook's: Slack, Discord and Teams put their secret in it, so it is
 * `/REDACTED`. An unparsable URL is reported by its scheme only.
 */
export function telemetryUrl(raw: string, format?: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return /^[a-z][a-z0-9+.-]*:/i.exec(raw)?.[0] ?? 'invalid';
  }
  url.username = '';
  url.password = '';
  url.hash = '';
  if (format !== undefined && isChatFormat(format)) url.pathname = `/${REDACTED}`;
  for (const key of new Set(url.searchParams.keys())) url.searchParams.set(key, REDACTED);
  return url.toString();
}

export interface WebhookSpanProps {
  url: string;
  /** The webhook's format: a chat webhook's path is its secret, kept out of `url.full`. */
  chat?: { format: string };
  webhookId?: string;
  deliveryId: string;
  attempt: number;
  type: string;
}

export interface WebhookSpanResult {
  ok: boolean;
  statusCode: number | null;
  outcome: AttemptOutcome;
  error: string | null;
}

/**
 * Runs one attempt inside a CLIENT span `POST`. `send` gets the trace context headers
 * (`traceparent`, and `tracestate` when there is one) to add to the request: empty while
 * telemetry is off. A non-2xx answer, a timeout, a network error or a refused target sets the
 * span's status to ERROR with `error.type`.
 */
export async function withWebhookSpan<R extends WebhookSpanResult>(
  props: WebhookSpanProps,
  send: (traceHeaders: Record<string, string>) => Promise<R>,
): Promise<R> {
  let server: Attributes = {};
  try {
    const u = new URL(props.url);
    server = {
      'server.address': u.hostname,
      'server.port': Number(u.port) || (u.protocol === 'http:' ? 80 : 443),
      'url.scheme': u.protocol.replace(':', ''),
    };
  } catch {
    // refused below as an invalid URL; the span still records the attempt
  }
  const attributes: Attributes = {
    'http.request.method': 'POST',
    'url.full': telemetryUrl(props.url, props.chat?.format),
    ...server,
    ...(props.webhookId ? { 'intake.webhook.id': props.webhookId } : {}),
    'intake.webhook.delivery_id': props.deliveryId,
    'intake.webhook.attempt': props.attempt,
    'intake.webhook.event_type': props.type,
  };
  return inActiveSpan(tracer, 'POST', { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const traceHeaders: Record<string, string> = {};
    propagation.inject(context.active(), traceHeaders);
    const result = await send(traceHeaders);
    if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
    span.setAttribute('intake.webhook.outcome', result.outcome);
    if (!result.ok) {
      span.setAttribute('error.type', result.statusCode !== null ? String(result.statusCode) : result.outcome);
      span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? undefined });
    }
    return result;
  });
}
