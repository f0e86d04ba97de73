import type { Context } from 'koa';
import type { Db, Queryable } from '../base/db';
import { newId } from '../contracts/ids';
import type { Actor, Principal } from '../auth/api-keys';

/** The actions the audit log records (what `GET /v1/audit-log?action=` filters on). */
export const AUDIT_ACTIONS = [
  'member.invited',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'member.invitation_spent',
  'member.invitation_resent',
  'session.signed_in',
  'session.sign_in_failed',
  'session.signed_out',
  'session.ended',
  'password.reset_requested',
  'password.changed',
  'member.two_factor_enabled',
  'member.two_factor_disabled',
  'member.recovery_codes_renewed',
  'member.credentials_removed',
  'account.two_factor_required',
  'api_key.created',
  'api_key.revoked',
  'form.created',
  'form.updated',
  'form.deleted',
  'form.restored',
  'view.saved',
  'view.deleted',
  'project.created',
  'project.updated',
  'project.deleted',
  'account.created',
  'webhook.created',
  'webhook.updated',
  'webhook.secret_rotated',
  'webhook.deleted',
  'webhook.tested',
  'submission.deleted',
  'submission.restored',
  'submission.status_changed',
  'submissions.bulk_changed',
  'submissions.exported',
  'deliveries.replayed',
  'submissions.purged',
  'data_subject.looked_up',
  'data_subject.exported',
  'data_subject.erased',
  'audit_log.exported',
] as const;
/** A listed action, or `operation.<operationId>`, which versions before 2026-12-02 wrote for a route without one. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number] | `operation.${string}`;

export interface AuditEntry {
  accountId: string;
  actor: Actor;
  action: AuditAction;
  target?: { type: string; id: string | null } | undefined;
  /** What changed, never a secret value (names of settings, roles, counts). */
  details?: Record<string, unknown>;
  ip?: string | null;
  userAgent?: string | null;
}

/**
 * The project of each kind of target, found as the entry is written (it stays the project it was in then): an entry
 * about a deletion is written before the row goes.
 */
const PROJECT_OF: Record<string, string> = {
  form: 'SELECT project_id FROM forms WHERE id = ?',
  submission: 'SELECT f.project_id FROM submissions s JOIN forms f ON f.id = s.form_id WHERE s.id = ?',
  webhook: 'SELECT f.project_id FROM webhooks w JOIN forms f ON f.id = w.form_id WHERE w.id = ?',
  delivery: `SELECT f.project_id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN forms f ON f.id = w.form_id
    WHERE d.id = ?`,
  view: 'SELECT f.project_id FROM saved_views v JOIN forms f ON f.id = v.form_id WHERE v.id = ?',
};

function projectOf(db: Queryable, target: AuditEntry['target']) {
  if (!target?.id) return null;
  if (target.type === 'project') return target.id;
  const lookup = PROJECT_OF[target.type];
  return lookup ? db.raw(`(${lookup})`, [target.id]) : null;
}

/** Appends one entry (the table refuses updates and deletes, see migration 013). */
export async function recordAudit(db: Queryable, entry: AuditEntry, at: Date = new Date()): Promise<void> {
  await db('audit_log').insert({
    id: newId('auditEntry', at.getTime()),
    account_id: entry.accountId,
    at,
    actor_type: entry.actor.type,
    actor_id: entry.actor.id,
    actor_label: entry.actor.label?.slice(0, 300) ?? null,
    action: entry.action,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    project_id: projectOf(db, entry.target),
    ip: entry.ip?.slice(0, 100) ?? null,
    user_agent: entry.userAgent?.slice(0, 300) ?? null,
    details: JSON.stringify(entry.details ?? {}),
  });
}

/** A member as audit entries name them: the member row's id, account and e-mail. */
export interface AuditedMember {
  id: string;
  account_id: string;
  email: string;
}

/** An entry about what members did to themselves (signing in, joining, their password, their second factor). */
export function recordMemberAudit(
  db: Queryable,
  member: AuditedMember,
  entry: Pick<AuditEntry, 'action' | 'details' | 'ip' | 'userAgent'>,
  at?: Date,
): Promise<void> {
  const self = { type: 'member' as const, id: member.id };
  return recordAudit(
    db,
    { accountId: member.account_id, actor: { ...self, label: member.email }, target: self, ...entry },
    at,
  );
}

/** The request's side of an entry: who (the principal's actor), from where. */
export function auditContext(
  ctx: Context,
  principal: Principal,
): Pick<AuditEntry, 'accountId' | 'actor' | 'ip' | 'userAgent'> {
  return { accountId: principal.accountId, actor: principal.actor, ...clientOf(ctx) };
}

/** The client's address (as TRUST_PROXY allows Koa to read it) and user agent. */
export function clientOf(ctx: Context): { ip: string | null; userAgent: string | null } {
  return { ip: ctx.ip || null, userAgent: ctx.get('user-agent') || null };
}

/**
 * Deletes the entries older than `retentionDays`: the only delete the table's trigger lets through, as it
 * sets `intake.audit_purge` for its own transaction only.
 */
export async function purgeAuditLog(db: Db, retentionDays: number, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  return db.transaction(async (trx) => {
    await trx.raw(`SELECT set_config('intake.audit_purge', 'on', true)`);
    return Number(await trx('audit_log').where('at', '<', cutoff).delete());
  });
}
