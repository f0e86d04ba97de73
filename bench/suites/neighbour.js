/**
 * One account's webhooks beside another account's broken receiver (the noisy neighbour): an ingest and a delivery
 * process; account B posts 20 a second (open loop) to a receiver that answers at once, and B's p99 post → webhook (the
 * receiver has the webhook − the client has the 201) is measured alone, beside account A posting 100 a second to a
 * receiver that never answers, and beside A posting 100 a second to one that answers 500 at once; and, for what A's
 * posts cost B when nothing of A's is broken, beside A posting to a receiver that answers at once. Target (the
 * isolation's): B's p99 beside A's broken receiver ≤ 2 × B's p99 alone, or alone + 250 ms when that is more.
 *
 * The sides are measured in ROUNDS turns, the order reversed every other turn (the box drifts; see `inTurns`),
 * and each side's p99 is over its posts of every turn. Each turn beside A has an A of its own (a new account and
 * webhook: its break, SendSlots' BREAK, starts again), deleted after its turn, its deliveries with it, and its hanging
 * attempts ended, before the next turn. WEBHOOK_TIMEOUT_MS=3000 (A's hanging attempts end, and come back, during a turn),
 * the default retry ladder. `test/faults/noisy-neighbour.alone.test.ts` asserts the order and state the isolation
 * keeps; this suite, how fast B's webhooks are beside A.
 */
const http = require('node:http');
const { benchPlatform, formWithWebhook, receiver, service, percentile, until, round } = require('../stack');
const { offerAtRate, formPoster, settle, WARM_UP_S } = require('../lib');

const RATES = { a: 100, b: 20 };
const ROUNDS = 2;
const WEBHOOK_TIMEOUT_MS = '3000';
const BODY = 'name=Ada&email=ada%40example.com&message=hello';
/** The sides, in the order of odd turns (even turns reverse it). */
const SIDES = ['alone', 'healthy', 'hanging', 'failing'];
const NEIGHBOURS = {
  // A's load alone: what its posts cost B when nothing of A's is broken.
  healthy: { what: 'a receiver answering at once', answer: (res) => res.end('ok') },
  hanging: { what: 'a receiver that never answers', answer: () => undefined },
  failing: { what: 'a receiver answering 500 at once', answer: (res) => ((res.statusCode = 500), res.end('down')) },
};

/** A's receiver: answers with `answer` (or never); counts the requests and the connections still open. */
async function neighbourReceiver(answer) {
  const counts = { requests: 0, open: 0 };
  const server = http.createServer((req, res) => {
    counts.requests++;
    counts.open++;
    res.on('close', () => counts.open--);
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    counts,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

/** B's posts for `duration` s at its rate (with A's beside, when given); B's latencies once all have arrived. */
async function turn({ ingest, b, target, duration, beside }) {
  const ofB = formPoster(`${ingest.url}/v1/f/${b.slug}`, BODY);
  const ofA = beside && formPoster(`${ingest.url}/v1/f/${beside.slug}`, BODY);
  await Promise.all([offerAtRate(duration, RATES.b, ofB.postOne), ofA && offerAtRate(duration, RATES.a, ofA.postOne)]);
  await until(
    () => [...ofB.answered.keys()].every((id) => target.arrivals.has(id)),
    120_000,
    `every webhook of B (answers ${JSON.stringify(ofB.statuses)})`,
  );
  return [...ofB.answered].map(([id, at]) => target.arrivals.get(id) - at);
}

/** One side's turn: alone, or beside a new A with its receiver, which is deleted and quiet again afterwards. */
async function measureSide(side, stack) {
  if (side === 'alone') return { latencies: await turn(stack) };
  const { platform } = stack;
  const neighbour = await neighbourReceiver(NEIGHBOURS[side].answer);
  try {
    const a = await formWithWebhook(platform, neighbour.url);
    const latencies = await turn({ ...stack, beside: a });
    const requests = neighbour.counts.requests;
    // A's webhook goes, and its deliveries with it; its attempts still in flight end (WEBHOOK_TIMEOUT_MS).
    await platform.db('webhooks').where({ account_id: a.accountId }).delete();
    await until(() => neighbour.counts.open === 0, 60_000, `${side}: A's attempts in flight`);
    return { latencies, requests };
  } finally {
    await neighbour.close();
  }
}

/** p50, p99 and max of some latencies (ms), and how many. */
function summary(latencies) {
  const sorted = [...latencies].sort((x, y) => x - y);
  const at = (p) => round(percentile(sorted, p));
  return { p50: at(50), p99: at(99), max: round(sorted[sorted.length - 1]), webhooks: sorted.length };
}

/**
 * ROUNDS turns of every side, the order reversed every other turn: a row per turn, each side's latencies over every
 * turn (`pooled`), and each turn's p99 by side (`rounds`).
 */
async function measureRounds(stack, log) {
  const { duration } = stack;
  const rows = [];
  const rounds = [];
  const pooled = Object.fromEntries(SIDES.map((side) => [side, []]));
  for (let r = 1; r <= ROUNDS; r++) {
    const p99 = {};
    for (const side of r % 2 === 1 ? SIDES : [...SIDES].reverse()) {
      await settle(stack.platform.db);
      const name = side === 'alone' ? 'B alone' : `B beside ${NEIGHBOURS[side].what}`;
      log(
        `round ${r}: ${name}, B at ${RATES.b}/s${side === 'alone' ? '' : ` and A at ${RATES.a}/s`} for ${duration} s`,
      );
      const { latencies, requests } = await measureSide(side, stack);
      pooled[side].push(...latencies);
      p99[side] = summary(latencies).p99;
      const note = requests === undefined ? '' : `A's receiver had ${requests} requests`;
      rows.push({ name: `${name}, round ${r}`, rate: round(latencies.length / duration), ...summary(latencies), note });
    }
    rounds.push(p99);
  }
  return { rows, pooled, rounds };
}

/**
 * B's p99 beside A against the target, from B's p99 alone (both over every turn); each round's own ratio (its p99
 * beside ÷ its p99 alone), for the spread; and, beside a broken receiver, ÷ B's p99 beside A's healthy one: what the
 * breakage costs B over A's posts.
 */
function againstTarget(side, pooled, rounds) {
  const p99 = (s) => summary(pooled[s]).p99;
  const [alone, beside] = [p99('alone'), p99(side)];
  const bound = Math.max(2 * alone, alone + 250);
  const each = rounds.map((r) => (r[side] / r.alone).toFixed(2)).join(', ');
  const overHealthy =
    side === 'healthy' ? '' : `; ÷ beside A's healthy receiver ${(beside / p99('healthy')).toFixed(2)}`;
  return (
    `${beside} ms; ÷ alone ${(beside / alone).toFixed(2)} (rounds ${each}; target ≤ 2, or alone + 250 ms: ` +
    `≤ ${round(bound)} ms, ${beside <= bound ? 'met' : 'not met'})${overHealthy}`
  );
}

exports.run = async function run({ duration, log }) {
  const { platform, env, close } = await benchPlatform();
  const target = await receiver();
  const b = await formWithWebhook(platform, target.url);
  const processEnv = { ...env, WEBHOOK_TIMEOUT_MS };
  const ingest = await service('ingest', processEnv);
  const delivery = await service('delivery', processEnv);
  const stack = { platform, ingest, b, target, duration };
  try {
    log(`warming up (${WARM_UP_S} s of B at ${RATES.a}/s)`);
    const warm = formPoster(`${ingest.url}/v1/f/${b.slug}`, BODY);
    await offerAtRate(WARM_UP_S, RATES.a, warm.postOne);
    await until(() => [...warm.answered.keys()].every((id) => target.arrivals.has(id)), 120_000, 'warm-up webhooks');

    const { rows, pooled, rounds } = await measureRounds(stack, log);
    const alone = summary(pooled.alone);
    return {
      rows,
      figures: {
        [`B's p99 post → webhook alone (${RATES.b}/s)`]: `${alone.p99} ms (p50 ${alone.p50} ms)`,
        [`B's p99 beside A (${RATES.a}/s) to ${NEIGHBOURS.healthy.what}`]: againstTarget('healthy', pooled, rounds),
        [`B's p99 beside A (${RATES.a}/s) to ${NEIGHBOURS.hanging.what}`]: againstTarget('hanging', pooled, rounds),
        [`B's p99 beside A (${RATES.a}/s) to ${NEIGHBOURS.failing.what}`]: againstTarget('failing', pooled, rounds),
        "B's duplicate webhook requests": target.requests() - target.arrivals.size,
      },
    };
  } finally {
    await ingest.stop();
    await delivery.stop();
    await target.close();
    await close();
  }
};
