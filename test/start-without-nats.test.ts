import { randomBytes } from 'node:crypto';
import { eventually, startNatsServer, type OwnServer } from '@intake/shared/testing';
import { formWithWebhook, spawnAllInOne, startWebhookReceiver, stopAllInOne } from './all-in-one';

/**
 * `npm start` before NATS is up, as a newcomer runs it: the process listens and is ready on Postgres alone, says once
 * that it waits for NATS, accepts posts into the outbox, and delivers them once NATS comes.
 */
describe('all-in-one process started before NATS', () => {
  const database = `intake_nonats_${randomBytes(4).toString('hex')}`;
  let nats: OwnServer;
  let app: ReturnType<typeof spawnAllInOne> | undefined;
  let url = '';
  const output = () => app?.output() ?? '';

  beforeAll(async () => {
    // A NATS of its own, stopped before the process starts: its address answers nothing until the test starts it.
    nats = await startNatsServer();
    await nats.stop();
    app = spawnAllInOne(database, { NATS_URL: nats.url }, 30_000);
    url = await app.url;
  }, 45_000);

  afterAll(async () => {
    await stopAllInOne(app?.child, database);
    await nats.destroy();
  });

  it('listens and is ready on Postgres alone, saying once that it waits for NATS and what waits', async () => {
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', workers: 'waiting for NATS' });
    const waits = await eventually(
      () =>
        output()
          .split('\n')
          .filter((l) => l.includes('waiting for NATS (NATS_URL)')),
      {
        message: 'the line saying it waits for NATS',
      },
    );
    expect(waits).toHaveLength(1);
    expect(waits[0]).toContain(nats.url);
    expect(
      output()
        .split('\n')
        .filter((l) => l.includes('Intake is ready')),
    ).toHaveLength(1);
  });

  it('accepts a post meanwhile and delivers it to the webhook once NATS answers', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { post: postForm } = await formWithWebhook(url, database, receiver.url);
      const post = await postForm('name=Ada&message=Hello');
      expect(post.status).toBe(201);
      const { id } = (await post.json()) as { id: string };
      expect(receiver.received).toEqual([]);

      await nats.start();
      await eventually(() => receiver.received.length > 0, {
        timeoutMs: 30_000,
        message: 'the webhook after NATS came',
      });
      expect(receiver.received.map((r) => r.body.data.submission_id)).toEqual([id]);
      // The threads deliver as soon as they run; the main thread says so once both have started.
      await eventually(() => output().includes('NATS answered: workers started'), { message: 'the started line' });
      expect(await (await fetch(`${url}/readyz`)).json()).toMatchObject({ status: 'ok', workers: 'started' });
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
