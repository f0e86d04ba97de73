#!/usr/bin/env node
/**
 * What publishing committed events to JetStream costs in CPU, per event: nats.js's own `js.publish`
 * (a batch of 200 in flight, awaited together) against a batch publisher over one inbox
 * subscription (`StreamPublisher`, when the build still has it). 20,000 events each way (`--events`),
 * three runs each, alternating; prints µs of this process's CPU (user + system) per event.
 * `node bench/publish-cost.js [--events 20000] [--runs 3]`
 */
const { headers } = require('nats');
const shared = { ...require('../shared/dist/contracts'), ...require('../shared/dist/messaging') };
const { benchPlatform } = require('./stack');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};

const body = JSON.stringify({
  submission_id: 'sub_x',
  form_id: 'frm_x',
  account_id: 'acc_x',
  status: 'received',
  payload: { name: 'Ada', email: 'ada@example.com', message: 'Hello from the benchmark' },
  files: [],
  file_bytes: 0,
  form_name: 'Bench form',
});

async function measure(publishBatch, events) {
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (let i = 0; i < events; i += 200) await publishBatch(Math.min(200, events - i));
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / events, wallUs: ((performance.now() - t) * 1000) / events };
}

(async () => {
  const events = arg('events', 20_000);
  const runs = arg('runs', 3);
  const { platform, close } = await benchPlatform();
  const { nats } = platform;
  const subject = nats.names.subject(shared.SUBJECTS.submissionCreated);
  const ways = {
    'js.publish, 200 in flight': (n) =>
      Promise.all(
        Array.from({ length: n }, () =>
          nats.js.publish(subject, body, { msgID: shared.newId('event'), headers: headers() }),
        ),
      ),
  };
  if (shared.StreamPublisher) {
    const publisher = new shared.StreamPublisher(nats.nc);
    ways['StreamPublisher, batches of 200'] = (n) =>
      publisher.publishAll(
        Array.from({ length: n }, () => ({ subject, data: body, msgId: shared.newId('event'), headers: headers() })),
        5000,
      );
  }
  try {
    for (const publish of Object.values(ways)) await measure(publish, 2000); // warm-up
    const results = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
    for (let r = 0; r < runs; r++)
      for (const [name, publish] of Object.entries(ways)) results[name].push(await measure(publish, events));
    for (const [name, rs] of Object.entries(results))
      console.log(
        `${name}: CPU µs/event ${rs.map((x) => x.cpuUs.toFixed(1)).join(', ')}; wall µs/event ${rs
          .map((x) => x.wallUs.toFixed(1))
          .join(', ')}`,
      );
  } finally {
    await close();
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
