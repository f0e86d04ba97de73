import { Type } from '@sinclair/typebox';
import { route, type Platform, type Queryable } from '@intake/shared';
import { countShadowCaught, countSpamExamples } from '../repositories/spam.repository';

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

/** How the account's classifier stands, and what shadow mode would have caught since `monthStart`. */
async function spamModelOf(db: Queryable, accountId: string, monthStart: Date) {
  const row = await countSpamExamples(db, accountId, { honeypotCap: CAPS.honeypotCatches });
  const shadowCaught = await countShadowCaught(db, { accountId, since: monthStart, threshold: SPAM_THRESHOLD });
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
    shadow_caught: shadowCaught,
  };
}

/** `GET /v1/spam/model`. */
export const getSpamModelRoute = route({
  method: 'GET',
  path: '/v1/spam/model',
  operationId: 'getSpamModel',
  summary: 'How the account’s spam classifier is doing, and what shadow mode would have caught this month',
  accountWide: true,
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
