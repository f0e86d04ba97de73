import { runPrepared, type Db } from '@intake/shared';

/** The enabled webhooks of these forms (each form with its account), in id order. */
export async function findEnabledWebhooksOfForms(
  db: Db,
  forms: { accountId: string; formId: string }[],
): Promise<{ id: string; account_id: string; form_id: string }[]> {
  if (forms.length === 0) return [];
  return runPrepared<{ id: string; account_id: string; form_id: string }>(db, {
    name: 'fanout_webhooks',
    text: `SELECT w.id, w.account_id, w.form_id FROM webhooks w
     JOIN unnest($1::text[], $2::text[]) AS f(account_id, form_id) ON f.account_id = w.account_id AND f.form_id = w.form_id
     WHERE w.enabled ORDER BY w.id`,
    values: [forms.map((f) => f.accountId), forms.map((f) => f.formId)],
  });
}

/** The notification addresses of these forms, by form id (forms without any are left out). */
export async function findNotifyEmailsOfForms(db: Db, formIds: string[]): Promise<Map<string, string[]>> {
  if (formIds.length === 0) return new Map();
  const rows = await runPrepared<{ id: string; notify_emails: string[] }>(db, {
    name: 'notify_forms',
    text: `SELECT id, notify_emails FROM forms WHERE id = ANY ($1::text[]) AND jsonb_array_length(notify_emails) > 0`,
    values: [formIds],
  });
  return new Map(rows.map((r) => [r.id, r.notify_emails]));
}

/**
 * The statement of `insertDeliveriesOfSubmissions` (its tests measure what it reads). Its cost
 * grows with the batch, not with the deliveries stored: one index probe per (webhook, submission)
 * pair looks for an existing delivery (the LIMIT keeps the subquery from being flattened into a
 * join, which the planner may answer with a scan of every delivery stored).
 */
export const INSERT_DELIVERIES = {
  name: 'fanout_insert_deliveries',
  text: `WITH r AS MATERIALIZED (
       SELECT * FROM json_to_recordset($1::json)
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
     SELECT d.id FROM r CROSS JOIN LATERAL (
       SELECT d.id, d.status, d.attempt_count FROM deliveries d
       WHERE d.webhook_id = r.webhook_id AND d.submission_id = r.submission_id AND d.event_type = 'submission.created'
       LIMIT 1) d
     WHERE d.status = 'pending' AND d.attempt_count = 0`,
};

/**
 * Creates the deliveries of several submissions in one statement (`INSERT_DELIVERIES`); one that
 * exists (a redelivered event) is left alone, and a submission no longer `received` (deleted,
 * relabelled spam) gets none. Returns every delivery of these (webhook, submission) pairs still
 * waiting for its first attempt, new or not.
 */
export async function insertDeliveriesOfSubmissions(
  db: Db,
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
  return runPrepared<{ id: string }>(db, { ...INSERT_DELIVERIES, values: [JSON.stringify(rows)] });
}
