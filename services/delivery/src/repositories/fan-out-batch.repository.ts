import type { Queryable } from '@intake/shared';

/** The enabled webhooks of these forms (each form with its account), in id order. */
export async function findEnabledWebhooksOfForms(
  db: Queryable,
  forms: { accountId: string; formId: string }[],
): Promise<{ id: string; account_id: string; form_id: string }[]> {
  if (forms.length === 0) return [];
  const { rows } = await db.raw<{ rows: { id: string; account_id: string; form_id: string }[] }>(
    `SELECT w.id, w.account_id, w.form_id FROM webhooks w
     JOIN unnest(?::text[], ?::text[]) AS f(account_id, form_id) ON f.account_id = w.account_id AND f.form_id = w.form_id
     WHERE w.enabled ORDER BY w.id`,
    [forms.map((f) => f.accountId), forms.map((f) => f.formId)],
  );
  return rows;
}

/** The notification addresses of these forms, by form id (forms without any are left out). */
export async function findNotifyEmailsOfForms(db: Queryable, formIds: string[]): Promise<Map<string, string[]>> {
  if (formIds.length === 0) return new Map();
  const { rows } = await db.raw<{ rows: { id: string; notify_emails: string[] }[] }>(
    `SELECT id, notify_emails FROM forms WHERE id = ANY (?::text[]) AND jsonb_array_length(notify_emails) > 0`,
    [formIds],
  );
  return new Map(rows.map((r) => [r.id, r.notify_emails]));
}

/**
 * Creates the deliveries of several submissions in one statement; one that exists (a redelivered
 * event) is left alone, and a submission no longer `received` (deleted, relabelled spam) gets
 * none. Returns every delivery of these (webhook, submission) pairs still waiting for its first
 * attempt, new or not. Its cost grows with the batch, not with the deliveries stored.
 */
export async function insertDeliveriesOfSubmissions(
  db: Queryable,
  rows: {
    id: string;
    account_id: string;
    webhook_id: string;
    form_id: string;
    submission_id: string;
    data: Record<string, unknown>;
  }[],
): Promise<{ id: string }[]> {
  if (rows.length === 0) return [];
  const { rows: pending } = await db.raw<{ rows: { id: string }[] }>(
    `WITH r AS MATERIALIZED (
       SELECT * FROM json_to_recordset(?::json)
         AS r(id text, account_id text, webhook_id text, form_id text, submission_id text, data jsonb)),
     inserted AS (
       INSERT INTO deliveries (id, account_id, webhook_id, form_id, submission_id, event_type, data)
       SELECT r.id, r.account_id, r.webhook_id, r.form_id, r.submission_id, 'submission.created', r.data
       FROM r JOIN submissions s ON s.id = r.submission_id AND s.status = 'received'
       ORDER BY r.webhook_id, r.submission_id
       ON CONFLICT (webhook_id, submission_id) WHERE event_type = 'submission.created' DO NOTHING
       RETURNING id)
     SELECT id FROM inserted
     UNION
     -- One index probe per pair (LIMIT keeps the subquery from being flattened into a join, which
     -- the planner may answer with a scan of every delivery: a cost that grows with the table).
     SELECT d.id FROM r CROSS JOIN LATERAL (
       SELECT d.id, d.status, d.attempt_count FROM deliveries d
       WHERE d.webhook_id = r.webhook_id AND d.submission_id = r.submission_id AND d.event_type = 'submission.created'
       LIMIT 1) d
     WHERE d.status = 'pending' AND d.attempt_count = 0`,
    [JSON.stringify(rows)],
  );
  return pending;
}
