import { newId, type DeliveryRequested } from '@intake/shared/contracts';
import { factories, useTestPlatform } from '@intake/shared/testing';
import { attemptLeaseMs, deliveryStore, processDeliveryRequests, SendSlots } from '../src';
import { createWebhookAgent } from '../src/send/attempt';
import { formWithHook, receiver } from './helpers';

/** The worker itself never calls a disabled webhook, whatever was queued before it was disabled. */
describe('a disabled webhook', () => {
  const platform = useTestPlatform();

  it('drops a queued replay and fails a waiting scheduled delivery, sending nothing', async () => {
    const target = await receiver();
    const agent = createWebhookAgent({ allowPrivateNetworks: true, timeoutMs: 2000 });
    try {
      const { accountId, formId, hook } = await formWithHook(platform, { url: target.url, enabled: false });
      const delivery = (status: 'failed' | 'retrying') =>
        factories.delivery(platform.db, {
          accountId,
          webhookId: hook.id,
          formId,
          submissionId: newId('submission'),
          data: { submission_id: 'x', form_id: formId, payload: {} },
          status,
          attemptCount: status === 'failed' ? 5 : 1,
        });
      const [failed, waiting] = [await delivery('failed'), await delivery('retrying')];
      const deps = {
        db: platform.db,
        secrets: platform.secrets,
        agent,
        config: platform.config,
        now: () => new Date(),
        store: deliveryStore(platform.db, attemptLeaseMs(2000)),
        slots: new SendSlots({ total: 64, perEndpoint: 8 }),
      };
      const processDeliveryRequest = async (d: typeof deps, request: DeliveryRequested) =>
        (await processDeliveryRequests(d, [{ request }]))[0]!;

      for (const id of [failed.id, waiting.id]) {
        expect(
          await processDeliveryRequest(deps, { event_id: newId('event'), delivery_id: id, trigger: 'replay' }),
        ).toEqual({ ack: true });
      }
      expect(target.requests).toHaveLength(0);
      expect(await platform.db('deliveries').where({ id: waiting.id }).first('status')).toEqual({ status: 'retrying' });
      expect(
        await processDeliveryRequest(deps, { event_id: newId('event'), delivery_id: waiting.id, trigger: 'schedule' }),
      ).toEqual({ ack: true });

      expect(target.requests).toHaveLength(0);
      expect(await platform.db('delivery_attempts').whereIn('delivery_id', [failed.id, waiting.id])).toEqual([]);
      expect(await platform.db('deliveries').where({ id: waiting.id }).first('status')).toEqual({ status: 'failed' });
    } finally {
      await agent.close();
      await target.close();
    }
  });
});
