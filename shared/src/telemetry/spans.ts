import { SpanStatusCode, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api';

/** Marks a span failed: the error recorded as an exception event, the status ERROR. */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Runs `fn` in a new active span that ends when `fn` settles; a throw marks the span failed and goes on up. */
export function inActiveSpan<T>(
  tracer: Tracer,
  name: string,
  options: SpanOptions,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}
