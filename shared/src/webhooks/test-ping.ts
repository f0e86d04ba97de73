import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { currentTraceHeaders, toNatsHeaders } from '../messaging/trace-headers';
import { type Nats } from '../messaging/nats';

/**
 * The test ping (`POST /v1/webhooks/:id/test`) is made by the delivery service, through the send path every attempt
 * takes (its agent and address guard, the webhook's send slots, its records): management asks for it with a NATS
 * request on this subject (relative to NATS_PREFIX; outside both streams, so no stream answers it), answered by one
 * delivery process of a queue group (services/delivery/src/send/test-ping.ts).
 */
export const TEST_PING_SUBJECT = 'rpc.webhook.test';

/** The longest a test ping waits for one of its webhook's send slots before it answers that the endpoint is busy. */
export const TEST_PING_SLOT_WAIT_MS = 5_000;

export const TestPingRequest = Type.Object({ account_id: Type.String(), webhook_id: Type.String() });
export type TestPingRequest = Static<typeof TestPingRequest>;

export const TestPingAnswer = Type.Union([
  Type.Object({
    delivery_id: Type.String(),
    ok: Type.Boolean(),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    duration_ms: Type.Integer(),
  }),
  /** No such webhook in that account (deleted meanwhile). */
  Type.Object({ not_found: Type.Literal(true) }),
]);
export type TestPingAnswer = Static<typeof TestPingAnswer>;

/** Why a test ping could not be asked for: no delivery process answered in time, or none runs. */
export class TestPingUnavailable extends Error {}

/**
 * Asks a delivery process for a test ping and waits for what the endpoint answered (`timeoutMs`: the attempt's own
 * time-out, a wait for a send slot and a margin). Throws TestPingUnavailable when no delivery process answers.
 */
export async function requestTestPing(nats: Nats, ping: TestPingRequest, timeoutMs: number): Promise<TestPingAnswer> {
  let reply;
  try {
    reply = await nats.nc.request(nats.names.subject(TEST_PING_SUBJECT), JSON.stringify(ping), {
      timeout: timeoutMs,
      headers: toNatsHeaders(currentTraceHeaders()),
    });
  } catch (err) {
    throw new TestPingUnavailable(String((err as Error).message ?? err));
  }
  const answer: unknown = JSON.parse(reply.string());
  if (!Value.Check(TestPingAnswer, answer)) throw new TestPingUnavailable('the delivery service answered nonsense');
  return answer;
}
