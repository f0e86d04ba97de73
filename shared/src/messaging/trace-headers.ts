import { headers as natsHeaders, type MsgHdrs } from 'nats';
import { context, propagation, ROOT_CONTEXT, type Context as OtelContext } from '@opentelemetry/api';

/** Trace context of the active span as a plain object (stored on outbox rows, copied to NATS headers). */
export function currentTraceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

export function toNatsHeaders(values: Record<string, string>): MsgHdrs {
  const h = natsHeaders();
  for (const [k, v] of Object.entries(values)) h.set(k, v);
  return h;
}

export function contextFromHeaders(h: MsgHdrs | undefined): OtelContext {
  return propagation.extract(ROOT_CONTEXT, h, {
    get: (carrier, key) => carrier?.get(key) || undefined,
    keys: (carrier) => (carrier ? carrier.keys() : []),
  });
}
