import { createDb } from '@intake/shared/base';
import { newId } from '@intake/shared/contracts';
import { factories, useTestPlatform } from '@intake/shared/testing';
import { claimDeliveries } from '../src/send/claim.repository';

/**
 * The send path's statements are prepared once per connection and kept: a migration that adds a
 * column while the delivery service runs (the chart's migrations Job runs beside the old pods)
 * must not break them on the connections that prepared them before.
 */
describe('the prepared statements of the send path', () => {
  const platform = useTestPlatform();

  it('still find their deliveries after a migration adds a column to deliveries', async () => {
    const account = await factories.account(platform.db);
    const form = await factories.form(platform.db, account.id);
    const webhook = await factories.webhook(platform, { accountId: account.id, formId: form.id });
    const { id } = await factories.delivery(platform.db, {
      accountId: account.id,
      webhookId: webhook.id,
      formId: form.id,
      submissionId: newId('submission'),
    });
    // One connection: the statement prepared by the first call is the one the second call runs.
    const service = createDb(platform.config.DATABASE_URL, { poolMax: 1 });
    try {
      // The claim leases the delivery: the lease is given back before the second claim.
      const claim = () => claimDeliveries(service, [{ id, trigger: 'schedule', leaseMs: 1000 }], 5);
      expect((await claim())[0]?.target?.url).toBe(webhook.url);
      await service('deliveries').where({ id }).update({ lease_until: null });
      await platform.db.raw('ALTER TABLE deliveries ADD COLUMN migration_probe integer');
      try {
        const [found] = await claim();
        expect(found?.target).toMatchObject({ id, url: webhook.url, status: 'pending', scheduled_attempts: 0 });
        expect(found?.lease).toEqual({ taken: true });
      } finally {
        await platform.db.raw('ALTER TABLE deliveries DROP COLUMN migration_probe');
      }
    } finally {
      await service.destroy();
    }
  });
});
