/**
 * Webhook end-to-end latency: an ingest and a delivery process, posts at a steady 500/s (open
 * loop), and a local receiver; latency runs from the moment the ingest answer (201) arrives to the
 * moment the webhook for that submission reaches the receiver (ingest's publish after commit + JetStream +
 * fan-out + send). Both processes are warmed first with WARM_UP_S at 500/s.
 */
const { benchPlatform, formWithWebhook, receiver, service, percentile, until, round } = require('../stack');
const { offerAtRate, formPoster, WARM_UP_S } = require('../lib');

const RATE = 500;
/** A second, lower rate: what the latency is when the machine is not saturated. */
const LOW_RATE = 100;

exports.run = async function run({ duration, log }) {
  const { platform, env, close } = await benchPlatform();
  const target = await receiver();
  const { slug } = await formWithWebhook(platform, target.url);
  const ingest = await service('ingest', env);
  const delivery = await service('delivery', env);
  const poster = formPoster(`${ingest.url}/v1/f/${slug}`, 'name=Ada&email=ada%40example.com');
  const { postOne, answered, statuses, latencies: ingestLatencies } = poster;
  try {
    const send = (seconds, rate) => offerAtRate(seconds, rate, postOne);
    // Warm, as every suite's servers are (WARM_UP_S of the measured load): one second at 100/s
    // measured the 500/s phase on processes still compiling, at 1–2 s of ingest p99 on a slow box.
    log(`warming up (${WARM_UP_S} s at ${RATE}/s)`);
    await send(WARM_UP_S, RATE);
    await until(
      () => [...answered.keys()].every((id) => target.arrivals.has(id)),
      60_000,
      `warm-up webhooks (answers ${JSON.stringify(statuses)}, ${target.arrivals.size} webhooks)`,
    );

    const rows = [];
    for (const rate of [RATE, LOW_RATE]) {
      // Each phase counts only its own posts (the warm-up's too are forgotten here).
      answered.clear();
      ingestLatencies.length = 0;
      for (const k of Object.keys(statuses)) delete statuses[k];
      log(`posting at ${rate}/s for ${duration} s`);
      const took = await send(duration, rate);
      await until(() => [...answered.keys()].every((id) => target.arrivals.has(id)), 120_000, 'every webhook');
      const latencies = [...answered].map(([id, at]) => target.arrivals.get(id) - at).sort((a, b) => a - b);
      const ingestSorted = ingestLatencies.sort((a, b) => a - b);
      // `rate` is what was achieved: the open-loop sender queues when the stack cannot keep up.
      rows.push({
        name: `webhook end-to-end, ${rate}/s offered`,
        rate: round(answered.size / took),
        p50: round(percentile(latencies, 50)),
        p99: round(percentile(latencies, 99)),
        max: round(latencies[latencies.length - 1]),
        webhooks: latencies.length,
        statuses: JSON.stringify(statuses),
      });
      rows.push({
        name: `ingest answer, ${rate}/s offered`,
        rate: round(answered.size / took),
        p50: round(percentile(ingestSorted, 50)),
        p99: round(percentile(ingestSorted, 99)),
        max: round(ingestSorted[ingestSorted.length - 1]),
        webhooks: '',
        statuses: '',
      });
    }
    return {
      rows,
      figures: {
        [`webhook p50 / p99 at ${RATE}/s offered (ms, answer → receiver)`]: `${rows[0].p50} / ${rows[0].p99} (achieved ${rows[0].rate}/s)`,
        [`webhook p50 / p99 at ${LOW_RATE}/s (ms)`]: `${rows[2].p50} / ${rows[2].p99}`,
        'webhook requests received (duplicates included)': target.requests(),
      },
    };
  } finally {
    await ingest.stop();
    await delivery.stop();
    await target.close();
    await close();
  }
};
