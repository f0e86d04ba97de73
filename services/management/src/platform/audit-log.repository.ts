import type { Queryable } from '@intake/shared/base';

/** An entry of the audit log as stored (migration 013: the table refuses updates and deletes). */
export interface AuditRow {
  id: string;
  at: Date;
  actor_type: string;
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  project_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

/** What a page of the log is filtered by; `actor` is an actor's id or, ignoring case, its label (an e-mail, a name). */
export interface AuditFilter {
  accountId: string;
  action?: string | undefined;
  actor?: string | undefined;
  projectId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** Entries before this one (newest first). */
  beforeId?: string | undefined;
  limit: number;
}

/** The account's entries, newest first, with the filters. */
export function findAuditEntries(db: Queryable, f: AuditFilter): Promise<AuditRow[]> {
  const q = db('audit_log').where('account_id', f.accountId);
  if (f.action) q.where('action', f.action);
  if (f.projectId) q.where('project_id', f.projectId);
  const actor = f.actor;
  if (actor) q.where((w) => w.where('actor_id', actor).orWhereRaw('lower(actor_label) = ?', [actor.toLowerCase()]));
  if (f.since) q.where('at', '>=', f.since);
  if (f.until) q.where('at', '<', f.until);
  if (f.beforeId) q.where('id', '<', f.beforeId);
  return q.orderBy('id', 'desc').limit(f.limit).select('*');
}

/** A target of an entry, by kind and id. */
export interface AuditTarget {
  type: string;
  id: string;
}

/**
 * The names of the account's objects that entries name, as they are now (a form in the trash included), by
 * `type:id`: a form's or account's name, a webhook's URL, a member's e-mail, a key's name (or prefix). An object
 * deleted since has none.
 */
export async function findTargetNames(
  db: Queryable,
  accountId: string,
  targets: AuditTarget[],
): Promise<Map<string, string>> {
  const ids = (type: string) => [...new Set(targets.filter((t) => t.type === type).map((t) => t.id))];
  const lookups: [string, Promise<{ id: string; name: string | null }[]>][] = [
    ['form', db('forms').where('account_id', accountId).whereIn('id', ids('form')).select('id', 'name')],
    ['project', db('projects').where('account_id', accountId).whereIn('id', ids('project')).select('id', 'name')],
    [
      'webhook',
      db('webhooks').where('account_id', accountId).whereIn('id', ids('webhook')).select('id', 'url as name'),
    ],
    ['member', db('members').where('account_id', accountId).whereIn('id', ids('member')).select('id', 'email as name')],
    [
      'api_key',
      db('api_keys')
        .where('account_id', accountId)
        .whereIn('id', ids('api_key'))
        .select('id', db.raw(`coalesce(name, prefix || '…') AS name`)),
    ],
    ['account', db('accounts').where('id', accountId).whereIn('id', ids('account')).select('id', 'name')],
  ];
  const names = new Map<string, string>();
  for (const [type, rows] of lookups)
    for (const row of ids(type).length ? await rows : []) if (row.name) names.set(`${type}:${row.id}`, row.name);
  return names;
}

/** The account's default project (where a form goes that names none), whose forms name no client. */
export async function findDefaultProjectId(db: Queryable, accountId: string): Promise<string | undefined> {
  const row: { id: string } | undefined = await db('projects')
    .where({ account_id: accountId, is_default: true })
    .first('id');
  return row?.id;
}
