import { type Queryable } from '@intake/shared/base';
import { spamModelForms, spamModelOf, type SpamModelOf } from '@intake/shared/contracts';

/**
 * This month's posts that got in (received) although the rules or a classifier found a reason (the honeypot, the bot
 * challenge and the owner's mark are not theirs): what turning the filter on would have kept out, on forms in shadow;
 * on forms that are on, the scores that only recorded (the starting model's, or a classifier's still learning).
 */
const SHADOW_CAUGHT = `
  SELECT count(*)::int AS n FROM submissions s JOIN forms f ON f.id = s.form_id
  WHERE s.account_id = ? AND FORMS AND f.spam_filter <> 'off' AND s.status = 'received' AND s.received_at >= ?
    AND EXISTS (
      SELECT 1 FROM json_array_elements_text(s.spam_reasons) r(reason)
      WHERE CASE
        WHEN r.reason ~ '^(classifier|starting-model):[0-9]+(\\.[0-9]+){0,1}$' THEN split_part(r.reason, ':', 2)::real >= ?
        WHEN r.reason LIKE 'classifier:%' OR r.reason LIKE 'starting-model:%' THEN false
        ELSE f.spam_filter = 'shadow'
          AND split_part(r.reason, ':', 1) NOT IN ('honeypot', 'challenge-unavailable', 'marked-by-owner')
      END)`;

/** The marks of each kind of a classifier's forms, and their honeypot catches not marked (up to `honeypotCap`). */
export async function countSpamExamples(
  db: Queryable,
  accountId: string,
  scope: SpamModelOf,
  props: { honeypotCap: number },
): Promise<{ spam: number; ham: number; honeypot: number }> {
  const [forms, id] = spamModelForms(scope);
  const marks = `SELECT count(*) FROM spam_examples e JOIN submissions s ON s.id = e.submission_id
    JOIN forms f ON f.id = s.form_id WHERE e.account_id = ? AND ${forms}`;
  const { rows } = await db.raw<{ rows: { spam: number; ham: number; honeypot: number }[] }>(
    `SELECT (${marks} AND e.is_spam)::int AS spam,
            (${marks} AND NOT e.is_spam)::int AS ham,
            (SELECT count(*) FROM (SELECT 1 FROM submissions s JOIN forms f ON f.id = s.form_id
               WHERE s.account_id = ? AND s.spam_reason = 'honeypot' AND ${forms}
                 AND NOT EXISTS (SELECT 1 FROM spam_examples e WHERE e.submission_id = s.id)
               LIMIT ?) h)::int AS honeypot`,
    [accountId, id, accountId, id, accountId, id, props.honeypotCap],
  );
  return rows[0] ?? { spam: 0, ham: 0, honeypot: 0 };
}

/** SHADOW_CAUGHT's count for a classifier's forms since `since`, the classifier counting from `threshold`. */
export async function countShadowCaught(
  db: Queryable,
  props: { accountId: string; scope: SpamModelOf; since: Date; threshold: number },
): Promise<number> {
  const [forms, id] = spamModelForms(props.scope);
  const shadow = await db.raw<{ rows: { n: number }[] }>(SHADOW_CAUGHT.replace('FORMS', forms), [
    props.accountId,
    id,
    props.since,
    props.threshold,
  ]);
  return shadow.rows[0]?.n ?? 0;
}

/**
 * This month's spam of some forms (`FORMS`), by the kind of reason that made each spam (`disposable-domain`,
 * `honeypot`, `marked-by-owner`, ...), most first: what the filter and the owner keep out, for the spam view.
 */
const CAUGHT_BY = `
  SELECT split_part(s.spam_reason, ':', 1) AS reason, count(*)::int AS count
  FROM submissions s JOIN forms f ON f.id = s.form_id
  WHERE s.account_id = ? AND FORMS AND s.status = 'spam' AND s.deleted_at IS NULL AND s.received_at >= ?
  GROUP BY 1 ORDER BY 2 DESC, 1`;

/** CAUGHT_BY for one form (`formId`), or for a classifier's forms. */
export async function countCaughtBy(
  db: Queryable,
  props: { accountId: string; scope: SpamModelOf; formId?: string; since: Date },
): Promise<{ reason: string; count: number }[]> {
  const [forms, id] = props.formId ? ['f.id = ?', props.formId] : spamModelForms(props.scope);
  const { rows } = await db.raw<{ rows: { reason: string; count: number }[] }>(CAUGHT_BY.replace('FORMS', forms), [
    props.accountId,
    id,
    props.since,
  ]);
  return rows;
}

/**
 * A mark moves its submission between the received and spam figures of its day and month (`usage_daily`,
 * `usage_daily_projects` and `usage_counters.spam`: the dashboard's and Usage's), added as the usage service adds its
 * counts, so the figures follow the owner's later marks whichever lands first. `used` (the quota) is not touched: it
 * counts what arrived (docs/decisions/usage.md).
 */
const MOVE_USAGE = `
  WITH daily AS (
    INSERT INTO usage_daily AS u (account_id, form_id, day, received, spam, file_bytes)
    VALUES (:account, :form, :day, :received, :spam, 0)
    ON CONFLICT (account_id, form_id, day) DO UPDATE
      SET received = u.received + excluded.received, spam = u.spam + excluded.spam),
  by_project AS (
    INSERT INTO usage_daily_projects AS u (account_id, project_id, day, received, spam)
    SELECT :account, project_id, :day, :received, :spam FROM forms WHERE id = :form
    ON CONFLICT (account_id, project_id, day) DO UPDATE
      SET received = u.received + excluded.received, spam = u.spam + excluded.spam)
  INSERT INTO usage_counters AS u (account_id, period, used, spam, file_bytes) VALUES (:account, :period, 0, :spam, 0)
  ON CONFLICT (account_id, period) DO UPDATE SET spam = u.spam + excluded.spam`;

/** MOVE_USAGE for one submission of `formId` received at `receivedAt`: `received` and `spam` are what each gains. */
export async function moveMarkedUsage(
  db: Queryable,
  props: { accountId: string; formId: string; receivedAt: Date; received: number; spam: number },
): Promise<void> {
  const day = props.receivedAt.toISOString().slice(0, 10);
  await db.raw(MOVE_USAGE, {
    account: props.accountId,
    form: props.formId,
    day,
    period: `${day.slice(0, 7)}-01`,
    received: props.received,
    spam: props.spam,
  });
}

/** The classifier a form uses (its project's, or its own), or undefined when the account has no such form. */
export async function modelScopeOfForm(
  db: Queryable,
  accountId: string,
  formId: string,
): Promise<SpamModelOf | undefined> {
  const form = await db('forms')
    .where({ account_id: accountId, id: formId })
    .whereNull('deleted_at')
    .first('project_id', 'spam_model');
  return form ? spamModelOf({ id: formId, ...form }) : undefined;
}

/**
 * Records the owner's verdict on a submission as a training example of the account's spam
 * classifier ("spam" or "not spam", the latest mark wins), with a copy of its fields as marked (json, in
 * their posted order); the example goes with its submission. Inside the caller's transaction.
 */
export async function recordSpamMark(
  trx: Queryable,
  props: { accountId: string; id: string; spam: boolean },
): Promise<void> {
  await trx.raw(
    `INSERT INTO spam_examples (submission_id, account_id, is_spam, payload, marked_at)
     SELECT id, account_id, ?, payload, now() FROM submissions WHERE account_id = ? AND id = ?
     ON CONFLICT (submission_id) DO UPDATE SET is_spam = excluded.is_spam, marked_at = excluded.marked_at`,
    [props.spam, props.accountId, props.id],
  );
}
