/**
 * The cost of the outbox relay and the NATS publish per submission: the time one relay takes to
 * publish N pre-written outbox rows (claim and delete 200 at a time with FOR UPDATE SKIP LOCKED,
 * publish them as one batch with Nats-Msg-Id, commit after every PubAck), and the JetStream
 * publish alone: nats.js's js.publish one at a time and 200 in flight, and the relay's batch
 * publisher (StreamPublisher) 200 per batch.
 */
const { headers } = require('nats');
const { newId, SUBJECTS } = require('../../shared/dist/contracts');
const { enqueueEvent, StreamPublisher } = require('../../shared/dist/messaging');
const { startPlatformRelay } = require('../../shared/dist/runtime');
const { benchPlatform, until, round } = require('../stack');
const { settle } = require('../lib');

function event(i) {
  return {
    submission_id: newId('submission'),
    form_id: newId('form'),
    account_id: newId('account'),
    status: 'received',
    received_at: new Date().toISOString(),
    payload: { name: 'Ada', email: 'ada@example.com', message: 'Hello from the benchmark', n: String(i) },
    files: [],
    file_bytes: 0,
    form_name: 'Bench form',
  };
}

exports.run = async function run({ scale, log }) {
  const count = Math.max(500, Math.round(10_000 * scale));
  const { platform, close } = await benchPlatform();
  const { db, nats } = platform;
  try {
    log(`writing ${count} outbox rows`);
    await db('outbox').delete(); // leftovers of an aborted run (the bench database only)
    for (let i = 0; i < count; i += 1000) {
      await db.transaction(async (trx) => {
        for (let j = i; j < Math.min(count, i + 1000); j++)
          await enqueueEvent(trx, { subject: SUBJECTS.submissionCreated, payload: event(j) });
      });
    }
    await settle(db);
    log('draining them with one relay');
    const start = performance.now();
    const relay = startPlatformRelay(platform, { pollMs: 20 });
    await until(async () => (await db('outbox').count({ n: '*' }).first()).n == 0, 120_000, 'outbox drained');
    const drainMs = performance.now() - start;
    await relay.stop();

    const subject = nats.names.subject(SUBJECTS.submissionCreated);
    const body = JSON.stringify(event(0));
    const serial = Math.round(count / 5);
    log(`publishing ${serial} one at a time, ${count} with 200 in flight`);
    let t = performance.now();
    for (let i = 0; i < serial; i++) await nats.js.publish(subject, body, { msgID: newId('submission') });
    const serialMs = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < count; i += 200)
      await Promise.all(
        Array.from({ length: Math.min(200, count - i) }, () =>
          nats.js.publish(subject, body, { msgID: newId('submission') }),
        ),
      );
    const parallelMs = performance.now() - t;
    const publisher = new StreamPublisher(nats.nc);
    t = performance.now();
    for (let i = 0; i < count; i += 200)
      await publisher.publishAll(
        Array.from({ length: Math.min(200, count - i) }, () => ({
          subject,
          data: body,
          msgId: newId('submission'),
          headers: headers(),
        })),
        5000,
      );
    const batchMs = performance.now() - t;
    publisher.close();

    const row = (name, messages, ms) => ({
      name,
      messages,
      ms: round(ms),
      perSecond: round((messages / ms) * 1000),
      usPerMessage: round((ms * 1000) / messages),
    });
    const rows = [
      row('outbox relay drain (Postgres claim + delete, batch publish)', count, drainMs),
      row('JetStream publish, one at a time', serial, serialMs),
      row('JetStream publish, 200 in flight', count, parallelMs),
      row('StreamPublisher, batches of 200', count, batchMs),
    ];
    return {
      rows,
      figures: {
        'relay cost per submission (µs)': rows[0].usPerMessage,
        'publish alone, serial / 200 in flight / batches of 200 (µs)': [rows[1], rows[2], rows[3]]
          .map((r) => r.usPerMessage)
          .join(' / '),
      },
    };
  } finally {
    await close();
  }
};
