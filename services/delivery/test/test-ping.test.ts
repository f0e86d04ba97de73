import { TEST_PING_SLOT_WAIT_MS } from '@intake/shared/webhooks';
import { createTestPlatform, factories, type TestPlatform } from '@intake/shared/testing';
import { createWebhookAgent } from '../src/send/attempt';
import { attemptLeaseMs, deliveryStore, type DeliverDeps } from '../src/send/deliver';
import { SendSlots } from '../src/send/slots';
import { testPing } from '../src/send/test-ping';
import { accountWithForm, answering, receiver } from './helpers';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await createTestPlatform({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: true, WEBHOOK_TIMEOUT_MS: 2000 });
});
afterAll(() => platform.close());

/** The send path's dependencies with send slots of our own: two in all, so one account's share is one. */
function deps(slots: SendSlots): DeliverDeps & { close(): Promise<void> } {
  const agent = createWebhookAgent({ allowPrivateNetworks: true, timeoutMs: 2000 });
  return {
    db: platform.db,
    secrets: platform.secrets,
    agent,
    config: platform.config,
    slots,
    now: () => new Date(),
    store: deliveryStore(platform.db, attemptLeaseMs(2000)),
    close: () => agent.close(),
  };
}

describe('the test ping, made by the delivery service', () => {
  it('is one attempt of the send path, recorded as a webhook.test delivery', async () => {
    const target = await receiver(answering(418, 'teapot'));
    const send = deps(new SendSlots({ total: 2, perEndpoint: 1 }));
    try {
      const { accountId, formId } = await accountWithForm(platform);
      const webhook = await factories.webhook(platform, { accountId, formId, url: target.url });
      const answer = await testPing(send, { accountId, webhookId: webhook.id });
      expect(answer).toMatchObject({ ok: false, statusCode: 418 });
      expect(target.requests).toHaveLength(1);
      expect(JSON.parse(target.requests[0]!.body)).toMatchObject({ type: 'webhook.test', data: { sample: true } });
      const row = await platform.db('deliveries').where({ id: answer!.deliveryId }).first();
      expect(row).toMatchObject({ event_type: 'webhook.test', status: 'failed', submission_id: null });
      const attempts = await platform.db('delivery_attempts').where({ delivery_id: answer!.deliveryId });
      expect(attempts.map((a) => [a.trigger, a.status_code])).toEqual([['test', 418]]);
      // Another account's webhook id finds nothing.
      const other = await accountWithForm(platform);
      expect(await testPing(send, { accountId: other.accountId, webhookId: webhook.id })).toBeUndefined();
    } finally {
      await send.close();
      await target.close();
    }
  });

  it('waits for one of its webhook’s send slots, and is not sent when none comes free in time', async () => {
    const target = await receiver();
    const slots = new SendSlots({ total: 2, perEndpoint: 1 });
    const send = deps(slots);
    try {
      const { accountId, formId } = await accountWithForm(platform);
      const webhook = await factories.webhook(platform, { accountId, formId, url: target.url });
      // An attempt the endpoint has not answered holds the account's one slot.
      const held = slots.take({ accountId, webhookId: webhook.id });
      if (!('release' in held)) throw new Error('the first slot should be free');

      // Freed while the ping waits: the ping goes out then.
      const started = performance.now();
      const freed = setTimeout(() => held.release(), 300);
      const waited = await testPing(send, { accountId, webhookId: webhook.id });
      clearTimeout(freed);
      expect(waited).toMatchObject({ ok: true, statusCode: 200 });
      expect(performance.now() - started).toBeGreaterThanOrEqual(250);
      expect(target.requests).toHaveLength(1);

      // Never freed: no request, the delivery failed with the reason, the answer says so.
      const again = slots.take({ accountId, webhookId: webhook.id });
      if (!('release' in again)) throw new Error('the slot should be free again');
      const before = performance.now();
      const refused = await testPing(send, { accountId, webhookId: webhook.id });
      expect(performance.now() - before).toBeGreaterThanOrEqual(TEST_PING_SLOT_WAIT_MS - 50);
      expect(refused).toMatchObject({ ok: false, statusCode: null, error: expect.stringMatching(/not sent/) });
      expect(target.requests).toHaveLength(1);
      const row = await platform.db('deliveries').where({ id: refused!.deliveryId }).first();
      expect(row).toMatchObject({ status: 'failed', last_error: expect.stringMatching(/not sent/) });
      again.release();
    } finally {
      await send.close();
      await target.close();
    }
  });
});
