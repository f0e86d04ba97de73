import pino from 'pino';
import { trace, isSpanContextValid } from '@opentelemetry/api';

export type Logger = pino.Logger;

/** Structured JSON logs on stdout (stderr for CLI use), with the active trace id on every line. */
export function createLogger(options: { level?: string; service: string; destination?: 1 | 2 }): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin() {
        const span = trace.getActiveSpan();
        const ctx = span?.spanContext();
        return ctx && isSpanContextValid(ctx) ? { trace_id: ctx.traceId, span_id: ctx.spanId } : {};
      },
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', '*.secret', 'secret', 'key'],
        censor: '[redacted]',
      },
    },
    pino.destination({ fd: options.destination ?? 1, sync: options.destination === 2 }),
  );
}
