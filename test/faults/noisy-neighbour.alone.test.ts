import type { Platform } from '@intake/shared/runtime';
import { eventually, listen, type TestPlatform } from '@intake/shared/testing';
import { MAX_ATTEMPTS } from '@intake/delivery';
import { BREAK } from '../../services/delivery/src/send/slots';
import { faultSuite, formWithWebhook, post, processEnv, startService, type ServiceProcess } from './harness';

/**
 * Account A's receiver never answers, or answers 500 at once, while A posts 100 a second; account B posts 20 a second
 * to a receiver that answers at once. What the test asserts is order and state, which a loaded machine does not change
 * and a broken isolation does; how fast B's webhooks are beside A is measured by `npm run bench` (`bench/suites/neighbour.js`).
 *
 * - Never answers: with a long time-out, every one of B's webhooks arrives, once, before any of A's attempts has ended
 *   (A's receiver saw no connection close, and no attempt of A's is recorded). A's attempts hold their send slots until
 *   the time-out, so B's can only go first while A holds no more than its share (SendSlots): with every slot A's, B's
 *   wait for A's time-outs.
 * - Answers 500 at once: every one of B's webhooks arrives, once; A's webhook breaks (SendSlots, BREAK): its deliveries
 *   wait parked in Postgres, none in the stream, and A's receiver is called at most BREAK.after times in a row, plus
 *   the attempts in flight when it broke (a process's SEND_CONCURRENCY at most), plus one probe at a time, each wait
 *   twice the one before, rather than at the rate of A's posts (a first attempt and four retries each within seconds on
 *   the fault tests' ladder: 3,000).
 *
 * It runs after the other test files, alone (`*.alone.test.ts`, see jest.config.js): its 720 posts load the machine.
 */
const SECONDS = 6;
const RATES = { a: 100, b: 20 };
/**
 * The webhooks' time-out: how long B's webhooks have to arrive before the first of A's hanging attempts ends, and long
 * enough that none of B's attempts times out on a loaded machine (its receiver answers at once; one that is not heard in
 * time is sent again, which the test counts as twice).
 */
const TIMEOUT_MS = 30_000;

/** Posts at `perSecond` for SECONDS (open loop: on schedule, whatever the answers); the ids of the 201s. */
async function openLoop(ingestUrl: string, slug: string, perSecond: number): Promise<string[]> {
  const accepted: string[] = [];
  const started = performance.now();
  const posts: Promise<void>[] = [];
  for (let i = 0; i < perSecond * SECONDS; i += 1) {
    const wait = started + (i * 1000) / perSecond - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    posts.push(
      post(ingestUrl, slug, { name: 'load', n: String(i) }).then((answer) => {
        if (answer.status === 201 && answer.id) accepted.push(answer.id);
      }),
    );
  }
  await Promise.all(posts);
  return accepted;
}

/** B's receiver: answers at once and counts each submission's webhooks. */
async function countingReceiver() {
  const arrived = new Map<string, number>();
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { submission_id: string } }).data
        .submission_id;
      arrived.set(id, (arrived.get(id) ?? 0) + 1);
      res.end('ok');
    });
  });
  /** Of `ids`, how many have not arrived, and how many arrived more than once. */
  const tally = (ids: string[]) => ({
    missing: ids.filter((id) => !arrived.has(id)).length,
    twice: ids.filter((id) => (arrived.get(id) ?? 0) > 1).length,
  });
  /** True once every one of `ids` has arrived; until then it throws with the tally (what a failed wait reports). */
  const everyArrived = (ids: string[]) => {
    if (tally(ids).missing > 0) throw new Error(JSON.stringify(tally(ids)));
    return true;
  };
  return { ...server, tally, everyArrived };
}

/** Attempts recorded for the deliveries of a form. */
async function attemptsOf({ db }: Pick<Platform, 'db'>, formId: string): Promise<number> {
  const row = await db('delivery_attempts as a')
    .join('deliveries as d', 'd.id', 'a.delivery_id')
    .where('d.form_id', formId)
    .count({ n: '*' })
    .first();
  return Number(row?.n ?? 0);
}

/** Ingest and delivery processes on the suite's platform: the fault tests' settings, and the time-out above. */
async function startStack(platform: TestPlatform, processes: ServiceProcess[]) {
  const settings = processEnv(platform.config, { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
  const ingest = await startService('ingest', settings);
  processes.push(ingest, await startService('delivery', settings, { ready: true }));
  return ingest;
}

describe("fault: account A's receiver never answers, under load beside account B", () => {
  const suite = faultSuite();

  it("sends every one of B's webhooks, once, before any of A's attempts has timed out", async () => {
    const { platform, processes } = suite;
    let opened = 0;
    let ended = 0;
    const hanging = await listen((_req, res) => {
      opened += 1;
      res.on('close', () => (ended += 1));
    });
    const quick = await countingReceiver();
    try {
      const a = await formWithWebhook(platform, hanging.url);
      const b = await formWithWebhook(platform, quick.url);
      const ingest = await startStack(platform, processes);

      const [ofA, ofB] = await Promise.all([
        openLoop(ingest.url, a.slug, RATES.a),
        openLoop(ingest.url, b.slug, RATES.b),
      ]);
      // Until B's webhooks are all in, or one of A's attempts has ended; A's read after B's, so an end of A's that
      // came before B's last webhook is seen.
      const seen = await eventually(
        async () => {
          const state = { ...quick.tally(ofB), openedOfA: opened };
          const endedOfA = ended + (await attemptsOf(platform, a.formId));
          return (state.missing === 0 || endedOfA > 0) && { ...state, endedOfA };
        },
        { timeoutMs: 2 * TIMEOUT_MS, message: "B's webhooks, or an end of one of A's attempts" },
      );
      console.log(
        `noisy neighbour, never answers: B ${JSON.stringify(seen)} (${ofB.length} of B's posts, ${ofA.length} of A's)`,
      );
      expect([ofA.length, ofB.length]).toEqual([RATES.a * SECONDS, RATES.b * SECONDS]);
      expect({ missing: seen.missing, twice: seen.twice, endedOfA: seen.endedOfA }).toEqual({
        missing: 0,
        twice: 0,
        endedOfA: 0,
      });
      // A was holding slots meanwhile: at least those of one slow webhook.
      expect(seen.openedOfA).toBeGreaterThanOrEqual(platform.config.WEBHOOK_ENDPOINT_CONCURRENCY);
    } finally {
      await Promise.all([hanging.close(), quick.close()]);
    }
  }, 150_000);
});

/** How many probes a webhook broken `ms` ago can have had: the first BREAK.firstMs after, each wait twice the last. */
function probesWithin(ms: number): number {
  let probes = 0;
  for (let at = BREAK.firstMs, wait = BREAK.firstMs; at <= ms; probes += 1) {
    wait = Math.min(BREAK.longestMs, wait * 2);
    at += wait;
  }
  return probes;
}

describe("fault: account A's receiver answers 500 at once, under load beside account B", () => {
  const suite = faultSuite();

  it("sends every one of B's webhooks once, and parks A's deliveries behind one probe at a time", async () => {
    const { platform, processes } = suite;
    let attempts = 0;
    let firstAt: number | undefined;
    const failing = await listen((_req, res) => {
      attempts += 1;
      firstAt ??= performance.now();
      res.statusCode = 500;
      res.end('down');
    });
    const quick = await countingReceiver();
    try {
      const a = await formWithWebhook(platform, failing.url);
      const b = await formWithWebhook(platform, quick.url);
      const ingest = await startStack(platform, processes);

      const [ofA, ofB] = await Promise.all([
        openLoop(ingest.url, a.slug, RATES.a),
        openLoop(ingest.url, b.slug, RATES.b),
      ]);
      await eventually(() => quick.everyArrived(ofB), { timeoutMs: 60_000, message: 'every webhook of B' });
      // Every one of A's deliveries made, and none of them waiting in the stream: parked, or ended.
      const ofAState = await eventually(
        async () => {
          const rows = await platform
            .db('deliveries as d')
            .leftJoin('delivery_parking as p', 'p.delivery_id', 'd.id')
            .where('d.form_id', a.formId)
            .select('d.status', 'p.delivery_id as parked');
          const waiting = rows.filter((r) => ['pending', 'retrying'].includes(r.status as string));
          const state = {
            deliveries: rows.length,
            parked: waiting.filter((r) => r.parked).length,
            inStream: waiting.filter((r) => !r.parked).length,
            succeeded: rows.filter((r) => r.status === 'succeeded').length,
          };
          // Not yet: this state is what a failure reports.
          if (state.deliveries !== ofA.length || state.inStream > 0) throw new Error(JSON.stringify(state));
          return state;
        },
        { timeoutMs: 60_000, message: "every one of A's deliveries parked or ended" },
      );
      const made = attempts;
      const bound = BREAK.after + platform.config.SEND_CONCURRENCY + probesWithin(performance.now() - firstAt!);
      console.log(
        `noisy neighbour, answers 500: A ${JSON.stringify(ofAState)}, ${made} attempts at A's receiver ` +
          `(bound ${bound}); B ${JSON.stringify(quick.tally(ofB))}`,
      );
      expect([ofA.length, ofB.length]).toEqual([RATES.a * SECONDS, RATES.b * SECONDS]);
      expect(quick.tally(ofB)).toEqual({ missing: 0, twice: 0 });
      expect(made).toBeLessThanOrEqual(bound);
      // A delivery ends failed only after MAX_ATTEMPTS of those attempts: the others wait parked.
      expect(ofAState.succeeded).toBe(0);
      expect(ofAState.parked).toBeGreaterThanOrEqual(ofA.length - Math.floor(made / MAX_ATTEMPTS));
    } finally {
      await Promise.all([failing.close(), quick.close()]);
    }
  }, 150_000);
});
