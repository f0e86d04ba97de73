import { Value } from '@sinclair/typebox/value';
import { runPrepared, type Db } from '@intake/shared/base';
import { AutoresponseSettings, formProject, type FormProject } from '@intake/shared/contracts';

/**
 * What a form's received submissions fan out to: its enabled webhooks (in id order), its
 * notification addresses and its autoresponse (when enabled); and its project, which its webhooks' envelopes name.
 */
export interface FanOutTargets {
  webhookIds: string[];
  notifyEmails: string[];
  autoresponse: AutoresponseSettings | undefined;
  project: FormProject;
}

/** The form's autoresponse when it is enabled and well-formed (the column is written only through its schema). */
function enabledAutoresponse(value: unknown): AutoresponseSettings | undefined {
  return Value.Check(AutoresponseSettings, value) && value.enabled ? value : undefined;
}

/** A submission's form (with its account), as `findFanOutTargets` keys it. */
export function formKey(submission: { account_id: string; form_id: string }): string {
  return `${submission.account_id} ${submission.form_id}`;
}

/**
 * The fan-out targets of these submissions' forms, by `formKey`, in one query; a form with no
 * webhook, address or enabled autoresponse, or gone, is left out.
 */
export async function findFanOutTargets(
  db: Db,
  submissions: { account_id: string; form_id: string }[],
): Promise<Map<string, FanOutTargets>> {
  const forms = [...new Map(submissions.map((s) => [formKey(s), s])).values()];
  if (forms.length === 0) return new Map();
  const rows = await runPrepared<{
    account_id: string;
    form_id: string;
    webhook_ids: string[];
    notify_emails: unknown;
    autoresponse: unknown;
    project_id: string | null;
    project_name: string | null;
    project_is_default: boolean | null;
  }>(db, {
    name: 'fanout_targets',
    // A form on a daily digest mails its owner no submission on its own (the digest worker does, once a day).
    text: `SELECT f.account_id, f.id AS form_id, f.autoresponse,
         CASE WHEN f.notification_schedule = 'each' THEN f.notify_emails ELSE '[]' END AS notify_emails,
         COALESCE(array_agg(w.id ORDER BY w.id) FILTER (WHERE w.id IS NOT NULL), '{}') AS webhook_ids,
         p.id AS project_id, p.name AS project_name, p.is_default AS project_is_default
       FROM unnest($1::text[], $2::text[]) AS q(account_id, form_id)
       JOIN forms f ON f.id = q.form_id AND f.account_id = q.account_id
       LEFT JOIN projects p ON p.id = f.project_id
       LEFT JOIN webhooks w ON w.form_id = f.id AND w.account_id = f.account_id AND w.enabled
       GROUP BY f.id, p.id
       HAVING count(w.id) > 0
         OR (f.notification_schedule = 'each'
           -- not a payload: notify_emails is the owner's list of addresses
           AND CASE WHEN jsonb_typeof(f.notify_emails) = 'array' THEN jsonb_array_length(f.notify_emails) > 0 END)
         OR (f.autoresponse->>'enabled') = 'true'`,
    values: [forms.map((f) => f.account_id), forms.map((f) => f.form_id)],
  });
  return new Map(
    rows.map((r) => [
      formKey(r),
      {
        webhookIds: r.webhook_ids,
        notifyEmails: Array.isArray(r.notify_emails) ? r.notify_emails.filter((a) => typeof a === 'string') : [],
        autoresponse: enabledAutoresponse(r.autoresponse),
        project: formProject(r),
      },
    ]),
  );
}

/**
 * The statement of `insertDeliveriesOfSubmissions` (its tests measure what it touches). An existing
 * delivery is found by the insert's own conflict check on the unique index, never by a query the
 * planner could answer with a scan of every delivery stored (a join it once answered so, and a
 * per-pair look-up it answered with a scan per pair when its statistics were off): the no-op
 * update returns the ones still waiting for their first attempt. A pair twice in one batch (an
 * event next to its redelivered copy) is kept once, as the update may touch a row only once. The
 * submission is share-locked by key: a deletion or erasure that holds it (they lock their rows
 * first) is waited for, and its submission then gets no delivery; one that comes after waits for
 * this statement and deletes the deliveries it made. Either way no delivery outlives its submission.
 */
export const INSERT_DELIVERIES = {
  name: 'fanout_insert_deliveries',
  text: `WITH r AS MATERIALIZED (
       SELECT DISTINCT ON (webhook_id, submission_id) * FROM json_to_recordset($1::json)
         AS r(id text, account_id text, webhook_id text, form_id text, submission_id text, data json)
       ORDER BY webhook_id, submission_id)
     INSERT INTO deliveries AS d (id, account_id, webhook_id, form_id, submission_id, event_type, data)
     SELECT r.id, r.account_id, r.webhook_id, r.form_id, r.submission_id, 'submission.created', r.data
     FROM r JOIN submissions s ON s.id = r.submission_id AND s.status = 'received'
     ORDER BY r.webhook_id, r.submission_id
     FOR KEY SHARE OF s
     ON CONFLICT (webhook_id, submission_id) WHERE event_type = 'submission.created'
       DO UPDATE SET status = d.status WHERE d.status = 'pending' AND d.attempt_count = 0
     RETURNING d.id, d.submission_id, d.webhook_id, d.account_id`,
};

/** A delivery waiting for its first attempt, with what its request names. */
export interface PendingDelivery {
  id: string;
  submission_id: string;
  webhook_id: string;
  account_id: string;
}

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
): Promise<PendingDelivery[]> {
  if (rows.length === 0) return [];
  return runPrepared<PendingDelivery>(db, {
    ...INSERT_DELIVERIES,
    values: [JSON.stringify(rows)],
  });
}
