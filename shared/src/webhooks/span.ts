import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import type { AttemptOutcome } from '../telemetry/metrics';
import { inActiveSpan } from '../telemetry/spans';

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
 * endpoint); an unparsable URL is reported by its scheme only.
 */
export function telemetryUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return /^[a-z][a-z0-9+.-]*:/i.exec(raw)?.[0] ?? 'invalid';
  }
  url.username = '';
  url.password = '';
  url.hash = '';
  for (const key of new Set(url.searchParams.keys())) url.searchParams.set(key, REDACTED);
  return url.toString();
}

export interface WebhookSpanProps {
  url: string;
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
    'url.full': telemetryUrl(props.url),
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
