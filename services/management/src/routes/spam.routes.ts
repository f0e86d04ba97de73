import { Type } from '@sinclair/typebox';
import { route, type Platform, type Queryable } from '@intake/shared';

/** As ingest's classifier (services/ingest/src/judge/spam-classifier.ts): examples of each kind before its verdict counts. */
const MIN_EXAMPLES = 10;
/** As ingest's classifier: the score from which a post is spam. */
const SPAM_THRESHOLD = 0.9;
/** As ingest's model store: the most marks of each kind and honeypot catches a model learns from. */
const CAPS = { marksPerKind: 2000, honeypotCatches: 500 };

const SpamModel = Type.Object(
  {
    spam_marks: Type.Integer({ description: 'posts marked spam the classifier learns from' }),
    honeypot_catches: Type.Integer({ description: 'honeypot catches it learns from as spam too' }),
    not_spam_marks: Type.Integer({ description: 'posts marked not spam it learns from' }),
    min_examples: Type.Integer({ description: 'examples of each kind before its verdict counts' }),
    learning: Type.Boolean({ description: 'true while either kind has fewer than `min_examples`' }),
    threshold: Type.Number({ description: 'the score from which a post is spam' }),
    month: Type.String({ description: 'this month (UTC), `YYYY-MM`' }),
    shadow_caught: Type.Integer({
      description:
        'this month’s received posts to forms in shadow mode whose reasons say the rules or the classifier would have ' +
        'caught them',
    }),
  },
  { additionalProperties: false },
);

/**
 * This month's posts that got in (received) although the rules or the classifier found a reason (the honeypot, the bot
 * challenge and the owner's mark are not theirs): what turning the filter on would have kept out.
 */
const SHADOW_CAUGHT = `
  SELECT count(*)::int AS n FROM submissions s JOIN forms f ON f.id = s.form_id
  WHERE s.account_id = ? AND f.spam_filter = 'shadow' AND s.status = 'received' AND s.received_at >= ?
    AND EXISTS (
      SELECT 1 FROM json_array_elements_text(s.spam_reasons) r(reason)
      WHERE CASE
        WHEN r.reason ~ '^classifier:[0-9]+(\\.[0-9]+){0,1}$' THEN split_part(r.reason, ':', 2)::real >= ?
        WHEN r.reason LIKE 'classifier:%' THEN false
        ELSE split_part(r.reason, ':', 1) NOT IN ('honeypot', 'challenge-unavailable', 'marked-by-owner')
      END)`;

/** How the account's classifier stands, and what shadow mode would have caught since `monthStart`. */
async function spamModelOf(db: Queryable, accountId: string, monthStart: Date) {
  const { rows } = await db.raw<{ rows: { spam: number; ham: number; honeypot: number }[] }>(
    `SELECT (SELECT count(*) FROM spam_examples WHERE account_id = ? AND is_spam)::int AS spam,
            (SELECT count(*) FROM spam_examples WHERE account_id = ? AND NOT is_spam)::int AS ham,
            (SELECT count(*) FROM (SELECT 1 FROM submissions s
               WHERE s.account_id = ? AND s.spam_reason = 'honeypot'
                 AND NOT EXISTS (SELECT 1 FROM spam_examples e WHERE e.submission_id = s.id)
               LIMIT ?) h)::int AS honeypot`,
    [accountId, accountId, accountId, CAPS.honeypotCatches],
  );
  const shadow = await db.raw<{ rows: { n: number }[] }>(SHADOW_CAUGHT, [accountId, monthStart, SPAM_THRESHOLD]);
  const row = rows[0] ?? { spam: 0, ham: 0, honeypot: 0 };
  const spam = Math.min(row.spam, CAPS.marksPerKind);
  const ham = Math.min(row.ham, CAPS.marksPerKind);
  return {
    spam_marks: spam,
    honeypot_catches: row.honeypot,
    not_spam_marks: ham,
    min_examples: MIN_EXAMPLES,
    learning: spam + row.honeypot < MIN_EXAMPLES || ham < MIN_EXAMPLES,
    threshold: SPAM_THRESHOLD,
    month: monthStart.toISOString().slice(0, 7),
    shadow_caught: shadow.rows[0]?.n ?? 0,
  };
}

/** `GET /v1/spam/model`. */
export const getSpamModelRoute = route({
  method: 'GET',
  path: '/v1/spam/model',
  operationId: 'getSpamModel',
  summary: 'How the account’s spam classifier is doing, and what shadow mode would have caught this month',
  description:
    'The examples the classifier learns from (the owner’s marks of each kind, the honeypot’s catches as spam), ' +
    'whether it is still learning, and how many of this month’s received posts to forms in shadow mode it or the rules ' +
    'would have caught.',
  tags: ['Spam'],
  auth: 'management',
  responses: { 200: { description: 'The account’s classifier', schema: SpamModel } },
  async handler(ctx, { principal }, { db, clock }: Platform) {
    const now = clock.now();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await spamModelOf(db, principal.accountId, monthStart);
  },
});

export const spamRoutes = [getSpamModelRoute];
