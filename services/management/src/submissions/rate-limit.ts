import { Type, type Static } from '@sinclair/typebox';
import { type Db, type Queryable } from '@intake/shared/base';
import { problem, toTimestamp } from '@intake/shared/contracts';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { IdParams, Nullable } from '../platform/schemas';
import { findFormRateLimit, planBound, refusalCounts } from './rate-limit.repository';

/*
 * A form's ingest rate limit as its owner sees and sets it (defect 23): posts per address and window, the form's own
 * (`forms.rate_limit`, 1 to its plan's `max_rate_limit`) or the deployment's RATE_LIMIT_POINTS, and the posts ingest
 * refused with 429 (`rate_limit_refusals`, per form and UTC day, written by ingest).
 */

/** 422 validation-failed at `body/rate_limit` for a limit above the account's plan's most (the schema holds ≥ 1). */
export async function checkRateLimit(
  db: Queryable,
  accountId: string,
  value: number | null | undefined,
): Promise<void> {
  if (value === undefined || value === null) return;
  const { max, plan } = await planBound(db, accountId);
  if (value > max) {
    const message = `must be at most ${max} on the ${plan} plan`;
    throw problem('validation-failed', `body/rate_limit ${message}`, {
      errors: [{ field: 'body/rate_limit', message }],
    });
  }
}

export const RateLimitField = Nullable(
  Type.Integer({
    minimum: 1,
    description:
      'posts ingest accepts from one address (an IPv6 client: its /64) in the rate-limit window, past which it ' +
      'answers 429 rate-limited; at most the plan’s `max` (`GET /v1/forms/:id/rate-limit`); null (the default) ' +
      'takes the deployment’s',
  }),
);

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const RateLimit = Type.Object(
  {
    form_id: Type.String(),
    limit: Type.Integer({ minimum: 1, description: 'posts per address and window ingest applies now' }),
    own: Nullable(Type.Integer({ minimum: 1, description: 'the form’s `rate_limit`; null: the default' })),
    default: Type.Integer({ minimum: 1, description: 'the deployment’s limit, for a form that sets none' }),
    max: Type.Integer({ minimum: 1, description: 'the most the account’s plan lets a form allow' }),
    plan: Type.String({ description: 'the plan’s name' }),
    window_seconds: Type.Integer({ minimum: 1, description: 'the window the posts are counted in' }),
    refused: Type.Object(
      {
        today: Count('posts refused with 429 this UTC day'),
        last_7_days: Count('in the last 7 UTC days, today included'),
        last_30_days: Count('in the last 30 UTC days, today included'),
        last_at: Nullable(Type.String({ format: 'date-time', description: 'the latest refusal of those 30 days' })),
      },
      { description: 'posts ingest refused with 429 rate-limited (counted within a few seconds of each)' },
    ),
  },
  { $id: 'FormRateLimit' },
);

export async function rateLimitOf(props: {
  db: Db;
  accountId: string;
  formId: string;
  now: Date;
  config: Platform['config'];
}): Promise<Static<typeof RateLimit>> {
  const { db, accountId, formId, now, config } = props;
  const form = await findFormRateLimit(db, accountId, formId);
  if (!form) throw problem('not-found', `No form ${formId}`);
  const { max, plan } = await planBound(db, accountId);
  const counts = await refusalCounts(db, formId, now.toISOString().slice(0, 10));
  return {
    form_id: formId,
    limit: form.rate_limit === null ? config.RATE_LIMIT_POINTS : Math.min(form.rate_limit, max),
    own: form.rate_limit,
    default: config.RATE_LIMIT_POINTS,
    max,
    plan,
    window_seconds: config.RATE_LIMIT_WINDOW_SECONDS,
    refused: {
      today: counts.today,
      last_7_days: counts.week,
      last_30_days: counts.month,
      last_at: counts.last_at ? toTimestamp(counts.last_at) : null,
    },
  };
}

/** `GET /v1/forms/:id/rate-limit`. */
export const getRateLimitRoute = route({
  method: 'GET',
  path: '/v1/forms/:id/rate-limit',
  operationId: 'getFormRateLimit',
  summary: 'A form’s ingest rate limit (what applies, the default, the plan’s most) and the posts it refused',
  description:
    'Set the form’s own limit with `PATCH /v1/forms/:id { rate_limit }` (null for the default); 422 above the ' +
    'plan’s `max`.',
  tags: ['Forms'],
  auth: 'management',
  params: IdParams('form', 'form id'),
  responses: { 200: { description: 'The limit and the refusals', schema: RateLimit } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, { db, clock, config }: Platform) {
    ctx.body = await rateLimitOf({ db, accountId: principal.accountId, formId: params.id, now: clock.now(), config });
  },
});
