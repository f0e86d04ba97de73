import { eventually, factories, listen, startPostgres } from '@intake/shared/testing';
import { faultSuiteWithServer, post, processEnv, startService } from './harness';

/**
 * Postgres goes away while a webhook attempt is in flight (the failover rig, test/cluster, saw it at every Postgres
 * failover and delivery cut): the attempt reached the receiver, its record cannot be written. The delivery process keeps
 * the record and writes it once Postgres is back, so the receiver gets the delivery once. Before, the record's failure
 * sent the message back to JetStream; redelivered, it found the lease lapsed and the webhook was sent again, under the
 * same delivery id.
 */
describe('fault: Postgres lost between a webhook attempt and its record', () => {
  const suite = faultSuiteWithServer(
    () => startPostgres(),
    (url) => ({ DATABASE_URL: url }),
  );

  it('records the attempt once Postgres is back, and does not send it again', async () => {
    const { platform, processes, server: postgres } = suite;
    const received: string[] = [];
    let restarted: Promise<void> | undefined;
    // The first delivery stops Postgres before it is answered; Postgres starts again 3 s later.
    const target = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id);
        if (received.length > 1) return void res.end('ok');
        void postgres.stop().then(() => {
          res.end('ok');
          restarted = new Promise((r) => setTimeout(r, 3000)).then(() => postgres.start());
        });
      });
    });
    try {
      const account = await factories.account(platform.db, { plan: 'team' });
      const form = await factories.form(platform.db, account.id);
      await factories.webhook(platform, { accountId: account.id, formId: form.id, url: target.url });
      const env = processEnv(platform.config);
      processes.push(await startService('ingest', env, { ready: true }));
      processes.push(await startService('delivery', env, { ready: true }));

      expect((await post(processes[0]!.url, form.slug)).status).toBe(201);
      await eventually(() => restarted !== undefined, {
        timeoutMs: 30_000,
        message: 'the webhook sent and Postgres stopped',
      });
      await restarted;
      const delivery = await eventually(
        async () => {
          const row = await platform
            .db('deliveries')
            .where({ form_id: form.id })
            .first('id', 'status', 'attempt_count');
          return row?.status === 'succeeded' ? row : undefined;
        },
        { timeoutMs: 60_000, message: 'the delivery recorded as succeeded' },
      );
      const attempts = await platform
        .db('delivery_attempts')
        .where({ delivery_id: delivery.id })
        .count({ n: '*' })
        .first();
      console.log(`record-after-failover: received ${JSON.stringify(received)}, ${attempts?.n} attempt rows`);

      expect(received).toEqual([delivery.id]);
      expect(delivery.attempt_count).toBe(1);
      expect(Number(attempts?.n)).toBe(1);
    } finally {
      await target.close();
    }
  });
});
