import { createTestPlatform, type TestPlatform } from '@intake/shared/testing';
import { ensureDeliveryConsumers, SEND_MAX_ACK_PENDING_DEFAULT } from '../src/consumers/consumers';

describe('the send consumer’s max_ack_pending', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await createTestPlatform();
  });
  afterAll(() => platform.close());

  const maxAckPending = async () => {
    const { nats } = platform;
    return (await nats.jsm.consumers.info(nats.names.deliveriesStream, 'delivery-send')).config.max_ack_pending;
  };

  it('is the default when created, an operator’s change survives a restart, SEND_MAX_ACK_PENDING wins', async () => {
    const { nats } = platform;
    await nats.jsm.consumers.delete(nats.names.deliveriesStream, 'delivery-send').catch(() => undefined);
    const unset = { ...platform, config: { ...platform.config, SEND_MAX_ACK_PENDING: undefined } };
    await ensureDeliveryConsumers(unset, ['send']);
    expect(await maxAckPending()).toBe(SEND_MAX_ACK_PENDING_DEFAULT);

    await nats.jsm.consumers.update(nats.names.deliveriesStream, 'delivery-send', { max_ack_pending: 777 });
    await ensureDeliveryConsumers(unset, ['send']);
    expect(await maxAckPending()).toBe(777);

    await ensureDeliveryConsumers({ ...platform, config: { ...platform.config, SEND_MAX_ACK_PENDING: 500 } }, ['send']);
    expect(await maxAckPending()).toBe(500);
  });
});
