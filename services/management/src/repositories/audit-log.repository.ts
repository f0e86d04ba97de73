import type { Queryable } from '@intake/shared';

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
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

/** What a page of the log is filtered by; `actor` is an actor's id or, ignoring case, its label (an e-mail, a name). */
export interface AuditFilter {
  accountId: string;
  action?: string | undefined;
  actor?: string | undefined;
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
  const actor = f.actor;
  if (actor) q.where((w) => w.where('actor_id', actor).orWhereRaw('lower(actor_label) = ?', [actor.toLowerCase()]));
  if (f.since) q.where('at', '>=', f.since);
  if (f.until) q.where('at', '<', f.until);
  if (f.beforeId) q.where('id', '<', f.beforeId);
  return q.orderBy('id', 'desc').limit(f.limit).select('*');
}
