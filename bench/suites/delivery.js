/**
 * Deliveries per second through ONE delivery process: the process runs once to create its durable
 * consumers and stops; N submission events are published; then the process starts again and fans out and sends
 * them all to a local receiver; throughput = N / (last webhook − process ready).
 */
const { newId, SUBJECTS } = require('../../shared/dist/contracts');
const { enqueueEvent } = require('../../shared/dist/messaging');
const { startPlatformRelay } = require('../../shared/dist/runtime');
const { benchPlatform, formWithWebhook, receiver, service, until, round } = require('../stack');

exports.run = async function run({ scale, log }) {
  const count = Math.max(100, Math.round(3000 * scale));
  const { platform, env, close } = await benchPlatform();
  const target = await receiver();
  const { accountId, formId } = await formWithWebhook(platform, target.url);
  let delivery;
  try {
    await (await service('delivery', env)).stop(); // creates the durable consumers, so they see what follows
    log(`writing ${count} submissions and their events`);
    const receivedAt = new Date();
    for (let i = 0; i < count; i += 500) {
      await platform.db.transaction(async (trx) => {
        for (let j = i; j < Math.min(count, i + 500); j++) {
          const id = newId('submission');
          const payload = { name: 'Ada', n: String(j) };
          await trx('submissions').insert({
            id,
            account_id: accountId,
            form_id: formId,
            status: 'received',
            payload: JSON.stringify(payload),
            file_count: 0,
            received_at: receivedAt,
          });
          await enqueueEvent(trx, {
            subject: SUBJECTS.submissionCreated,
            payload: {
              submission_id: id,
              form_id: formId,
              account_id: accountId,
              status: 'received',
              received_at: receivedAt.toISOString(),
              payload,
              files: [],
              file_bytes: 0,
              form_name: 'Bench form',
            },
          });
        }
      });
    }
    const relay = startPlatformRelay(platform, { pollMs: 50 });
    await until(async () => (await platform.db('outbox').count({ n: '*' }).first()).n == 0, 60_000, 'events published');
    await relay.stop();

    log('starting one delivery process');
    delivery = await service('delivery', env);
    const ready = performance.now();
    await until(() => target.arrivals.size >= count, 120_000, `${count} webhooks`);
    const last = Math.max(...target.arrivals.values());
    const seconds = (last - ready) / 1000;
    const rows = [
      {
        name: 'one delivery process (fan-out + send)',
        deliveries: count,
        seconds: round(seconds, 2),
        perSecond: round(count / seconds),
        requests: target.requests(),
      },
    ];
    return {
      rows,
      figures: { 'deliveries per second, one process': rows[0].perSecond },
      deliveriesPerSecond: rows[0].perSecond,
    };
  } finally {
    await delivery?.stop();
    await target.close();
    await close();
  }
};
