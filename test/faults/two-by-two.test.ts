import { eventually } from '@intake/shared/testing';
import { faultSuite, formWithReceiver, pool, post, startService, succeededDeliveries, tally } from './harness';

const POSTS = 300;

/** Two ingest and two delivery processes on one Postgres and one NATS: nothing lost, nothing doubled. */
describe('fault: two ingest and two delivery processes under load', () => {
  const suite = faultSuite();

  it('stores each accepted post once and delivers each once', async () => {
    const { platform, processes } = suite;
    const { target, slug, formId, env: faultEnv } = await formWithReceiver(platform, { delayMs: 5 });
    // The default time-out: an answer later than the time-out is a failure that is retried by design (the spec), and
    // on a busy 2-core box this test's own receiver can answer later than the harness's 1.5 s. Duplicates under a
    // short time-out and a long backlog are backlog-duplicates.test.ts's subject.
    const env = { ...faultEnv, WEBHOOK_TIMEOUT_MS: '10000' };
    try {
      const started = await Promise.all([
        startService('ingest', env),
        startService('ingest', env),
        startService('delivery', env, { ready: true }),
        startService('delivery', env, { ready: true }),
      ]);
      processes.push(...started);
      const ingests = started.slice(0, 2);

      const answers = await pool(POSTS, 16, (i) => post(ingests[i % 2]!.url, slug, { name: 'load', n: String(i) }));
      const accepted = new Set(answers.map((a) => a.id));
      await eventually(() => target.submissionIds().size >= accepted.size, {
        timeoutMs: 30_000,
        message: `webhooks for ${accepted.size} posts (have ${target.submissionIds().size})`,
      });
      await eventually(async () => (await succeededDeliveries(platform, formId)) === POSTS, {
        timeoutMs: 10_000,
        message: 'every delivery recorded',
      });

      const submissions = await platform.db('submissions').where({ form_id: formId }).select('id', 'payload');
      const deliveries = await platform
        .db('deliveries')
        .where({ form_id: formId })
        .select('id', 'submission_id', 'attempt_count');
      const ns = new Set(submissions.map((s) => (typeof s.payload === 'string' ? JSON.parse(s.payload) : s.payload).n));
      console.log(
        `two-by-two: ${POSTS} posts ${JSON.stringify(tally(answers.map((a) => a.status)))} over 2 ` +
          `ingest processes; ${submissions.length} submissions (${ns.size} distinct posts), ` +
          `${deliveries.length} deliveries, ${target.envelopes.length} webhooks received, ` +
          `${target.distinctIds().size} distinct, ${target.submissionIds().size} distinct submissions`,
      );

      expect(tally(answers.map((a) => a.status))).toEqual({ 201: POSTS });
      expect(accepted.size).toBe(POSTS);
      expect(submissions).toHaveLength(POSTS);
      expect(ns.size).toBe(POSTS);
      expect(new Set(deliveries.map((d) => d.submission_id)).size).toBe(POSTS);
      expect(deliveries).toHaveLength(POSTS);
      expect(deliveries.every((d) => d.attempt_count === 1)).toBe(true);
      expect(target.envelopes).toHaveLength(POSTS);
      expect(target.submissionIds()).toEqual(accepted);
    } finally {
      await target.close();
    }
  });
});
