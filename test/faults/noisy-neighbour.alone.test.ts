import { eventually, listen } from '@intake/shared/testing';
import { faultSuite, formWithWebhook, post, processEnv, startService } from './harness';

/**
 * Account A's receiver never answers (or fails at once) while A posts 100 a second; account B posts 20 a second to a
 * receiver that answers at once. B's webhooks must not wait for A's: each arrives once, and B's p99 post → webhook
 * stays within the issue's bound: twice B's p99 alone, or B's alone + 250 ms, whichever is larger.
 *
 * Before the send slots, A's attempts held every slot and B's waited for A's timeouts (a minute and more). Beside a
 * receiver answering 500 at once, A's attempts (each post's first and its 1 s retry: 200 a second) took the CPU B's
 * posts needed (B's p99 78–139 ms alone, 372–1,092 beside it); a webhook whose last 50 attempts failed now gets one
 * probe at a time (SendSlots, BREAK), and requests naming it are parked in Postgres before any statement reads their
 * delivery. This box is shared: now and then a stall of it (seen alone too: two of B's webhooks 332 ms late, their
 * 201s bunched) decides a p99 of 120 posts. So the test makes ROUNDS rounds, each with an A of its own (its break
 * starts again), and asserts the bound in at least one, and B far below A's timeout in all: an isolation that fails
 * (the slots, the CPU of A's retries, a stalled consumer) fails every round (with the slots' caps lifted, B's p99 was
 * 2,596 and 2,676 ms beside the hanging receiver); a stall of the box, one.
 * It runs after the other test files, alone (`*.alone.test.ts`, see jest.config.js): beside them, on two cores, B alone
 * took 725 ms at p99.
 */
const TIMEOUT_MS = 3000;
const SECONDS = 6;
const ROUNDS = 2;
const RATES = { a: 100, b: 20 };

/** A receiver that notes when each submission's webhook arrived (and how many times). */
async function timedReceiver() {
  const arrived = new Map<string, number[]>();
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { submission_id: string } }).data
        .submission_id;
      arrived.set(id, [...(arrived.get(id) ?? []), at]);
      res.end('ok');
    });
  });
  return { ...server, arrived };
}

/** Posts at `perSecond` for `seconds` (open loop: on schedule, whatever the answers); the 201s with when they came. */
async function openLoop(ingestUrl: string, slug: string, perSecond: number, seconds: number) {
  const accepted = new Map<string, number>();
  const started = performance.now();
  const posts: Promise<void>[] = [];
  for (let i = 0; i < perSecond * seconds; i += 1) {
    const due = started + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    posts.push(
      post(ingestUrl, slug, { name: 'load', n: String(i) }).then((answer) => {
        if (answer.status === 201 && answer.id) accepted.set(answer.id, performance.now());
      }),
    );
  }
  await Promise.all(posts);
  return accepted;
}

const p99 = (values: number[]) => [...values].sort((x, y) => x - y)[Math.ceil(values.length * 0.99) - 1] as number;

/** B's p99 post → webhook, once every accepted post arrived; and how many arrived more than once. */
async function latencies(accepted: Map<string, number>, receiver: Awaited<ReturnType<typeof timedReceiver>>) {
  await eventually(() => [...accepted.keys()].every((id) => receiver.arrived.has(id)), {
    timeoutMs: 60_000,
    message: 'every webhook of B',
  });
  const ms = [...accepted].map(([id, at]) => (receiver.arrived.get(id)?.[0] ?? NaN) - at);
  const duplicates = [...accepted.keys()].filter((id) => (receiver.arrived.get(id)?.length ?? 0) > 1).length;
  return { p99: p99(ms), duplicates };
}

/** A's receiver (started by the case) beside B's, each case on a platform (database, streams) of its own. */
function neighbourCase(what: string, receiverOfA: () => ReturnType<typeof listen>) {
  describe(`fault: account A's receiver ${what}, under load beside account B`, () => {
    const suite = faultSuite();

    it('keeps B’s webhooks as fast as when B is alone, each sent once', async () => {
      const { platform, processes } = suite;
      const ofA = await receiverOfA();
      const quick = await timedReceiver();
      try {
        const b = await formWithWebhook(platform, quick.url);
        const env = processEnv(platform.config, { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
        const ingest = await startService('ingest', env);
        processes.push(ingest, await startService('delivery', env, { ready: true }));

        const rounds = [];
        for (let round = 1; round <= ROUNDS; round++) {
          const a = await formWithWebhook(platform, ofA.url);
          const alone = await latencies(await openLoop(ingest.url, b.slug, RATES.b, SECONDS), quick);
          const [, beside] = await Promise.all([
            openLoop(ingest.url, a.slug, RATES.a, SECONDS),
            openLoop(ingest.url, b.slug, RATES.b, SECONDS),
          ]);
          const withA = await latencies(beside, quick);
          const bound = Math.max(2 * alone.p99, alone.p99 + 250);
          console.log(
            `noisy neighbour, round ${round}: B's p99 post → webhook ${alone.p99.toFixed(0)} ms alone, ` +
              `${withA.p99.toFixed(0)} ms beside A's receiver that ${what} at ${RATES.a}/s (bound ${bound.toFixed(0)}; ` +
              `${beside.size} of B's posts; duplicates ${alone.duplicates + withA.duplicates})`,
          );
          rounds.push({ alone, withA, bound, accepted: beside.size });
        }
        expect(rounds.filter((r) => r.withA.p99 <= r.bound).length).toBeGreaterThanOrEqual(1);
        for (const r of rounds) {
          expect(r.withA.p99).toBeLessThan(TIMEOUT_MS / 2);
          expect(r.accepted).toBe(RATES.b * SECONDS);
          expect([r.alone.duplicates, r.withA.duplicates]).toEqual([0, 0]);
        }
      } finally {
        await Promise.all([ofA.close(), quick.close()]);
      }
    }, 150_000);
  });
}

neighbourCase('never answers', () => listen(() => undefined));
neighbourCase('answers 500 at once', () => listen((_req, res) => ((res.statusCode = 500), res.end('down'))));
