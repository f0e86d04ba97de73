import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger, ensureDatabase } from '@intake/shared/base';
import { migrate } from '@intake/shared/schema';
import { closePlatform, createPlatform, type Platform } from '@intake/shared/runtime';
import { factories, testConfig } from '@intake/shared/testing';
import { CONSUMERS, reconcileDeliveries } from '@intake/delivery';
import { tempDir } from './harness';

const run = promisify(execFile);
const BIN = path.join('/usr/lib/postgresql', readdirSync('/usr/lib/postgresql').sort().at(-1) as string, 'bin');

/** Every submission and delivery, with the state a restore must bring back. */
async function digest(db: Platform['db']) {
  const submissions = await db('submissions').orderBy('id').select('id', 'status', 'payload', 'received_at');
  const deliveries = await db('deliveries').orderBy('id').select('id', 'status', 'attempt_count', 'next_attempt_at');
  const parked = await db('delivery_parking').orderBy('delivery_id').select('delivery_id', 'due_at');
  const attempts = await db('delivery_attempts').count({ n: '*' }).first();
  return { submissions, deliveries, parked, attempts: Number(attempts?.n) };
}

/**
 * The restore drill of docs/operations.md, on a small database of its own: seeded as the product leaves it
 * (submissions; deliveries succeeded, retrying and parked, pending), dumped with pg_dump, dropped, created again and
 * restored with pg_restore. Every submission and delivery comes back in the state it had; and the pending ones, whose
 * requests the stream no longer holds (JetStream is not in the dump), are found by the reconciler to be sent again.
 */
describe('restore drill: dump, drop, restore', () => {
  const dumps = tempDir('intake-drill-');
  const config = testConfig({
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/intake_drill_${process.pid}_${Date.now() % 100_000}`,
  });
  const name = new URL(config.DATABASE_URL).pathname.slice(1);
  const connection = ['-h', '127.0.0.1', '-p', '5432', '-U', 'postgres'];
  let platform: Platform | undefined;
  const open = async () =>
    (platform = await createPlatform(config, {
      service: 'test',
      logger: createLogger({ level: 'silent', service: 'test' }),
    }));
  const drop = async () => {
    if (platform) await closePlatform(platform).catch(() => undefined);
    platform = undefined;
    await run(path.join(BIN, 'dropdb'), [...connection, '--if-exists', '--force', name]);
  };
  afterAll(async () => {
    if (platform)
      for (const stream of [platform.nats.names.eventsStream, platform.nats.names.deliveriesStream])
        await platform.nats.jsm.streams.delete(stream).catch(() => undefined);
    await drop();
    dumps.remove();
  });

  it('brings back every submission and delivery state, and the reconciler re-sends what was pending', async () => {
    await ensureDatabase(config.DATABASE_URL);
    const { db } = await open();
    await migrate(db);
    const account = await factories.account(db, { plan: 'team' });
    const form = await factories.form(db, account.id);
    const webhook = await factories.webhook(
      { db, secrets: platform!.secrets },
      { accountId: account.id, formId: form.id },
    );
    const states = ['succeeded', 'failed', 'retrying', 'pending', 'pending'] as const;
    for (const [i, status] of states.entries()) {
      const stored = await factories.submission(platform!, {
        accountId: account.id,
        formId: form.id,
        payload: { n: String(i) },
      });
      const { id } = await factories.delivery(db, {
        accountId: account.id,
        webhookId: webhook.id,
        formId: form.id,
        submissionId: stored.event.submission_id,
        status,
        attemptCount: status === 'pending' ? 0 : 2,
      });
      if (status === 'retrying')
        await db('delivery_parking').insert({ delivery_id: id, due_at: new Date(Date.now() + 600_000) });
    }
    const before = await digest(db);
    const dump = path.join(dumps.dir, 'intake.dump');
    await run(path.join(BIN, 'pg_dump'), [...connection, '--format=custom', '--file', dump, name]);

    await drop();
    await run(path.join(BIN, 'createdb'), [...connection, name]);
    await run(path.join(BIN, 'pg_restore'), [...connection, '--dbname', name, '--exit-on-error', dump]);
    const restored = await open();
    const after = await digest(restored.db);
    const resent = await reconcileDeliveries({
      db: restored.db,
      nats: restored.nats,
      sendConsumer: CONSUMERS.send,
      // At once, for every delivery made so far (the product waits RECONCILE_AFTER).
      now: new Date(Date.now() + 1000),
      afterMs: 0,
    });
    console.log(
      `restore drill: ${after.submissions.length} submissions, ${after.deliveries.length} deliveries, ` +
        `${after.attempts} attempts back; the reconciler hands ${resent === 'backlog' ? '?' : resent.parked} to the pump`,
    );
    expect(after).toEqual(before);
    expect(after.submissions).toHaveLength(states.length);
    // The two pending deliveries (their requests were in JetStream) are asked for again; the parked one already is.
    expect(resent).toEqual({ walked: states.length, parked: 2 });
  });
});
