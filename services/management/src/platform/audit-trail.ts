import type { Context } from 'koa';
import type { Knex } from 'knex';
import { type Db, type Queryable } from '@intake/shared/base';
import { type Principal } from '@intake/shared/auth';
import { auditContext, recordAudit, type AuditEntry } from '@intake/shared/audit';

/** What a change's audit entry says of it (who made it, and from where, the writer knows). */
export type Entry = Pick<AuditEntry, 'action' | 'target' | 'details'>;
/** Who makes a change, and from where. */
export type Actor = Pick<AuditEntry, 'accountId' | 'actor' | 'ip' | 'userAgent'>;

/**
 * The one way a change is written to the audit log: a writer bound to who makes the change (a request's principal,
 * or the system for the purge), handed to the change beside its transaction. `record(trx, …)` appends in that
 * transaction, so the change and its record commit together or not at all. Every management operation that changes
 * something (or reads what an owner must be able to trace: exports) takes one; services/management/test/audit-trail
 * checks that each non-GET operation of the OpenAPI writes an entry.
 */
export interface Audit {
  /** Who the entries name; null for `unaudited`. */
  readonly who: Actor | null;
  record(trx: Queryable, ...entries: Entry[]): Promise<void>;
}

/** A writer for entries made by `who`, each stamped `at` (one request's changes share the time it started). */
export function auditAs(who: Actor, at: Date): Audit {
  return {
    who,
    async record(trx, ...entries) {
      for (const entry of entries) await recordAudit(trx, { ...who, ...entry }, at);
    },
  };
}

/** The writer of a management request: its principal, its client's address and user agent, the request's time. */
export function auditOf(ctx: Context, principal: Principal, platform: { clock: { now(): Date } }): Audit {
  return auditAs(auditContext(ctx, principal), platform.clock.now());
}

/** What a request's change is handed: the platform, the principal's account, and the writer for its entries. */
export function changeBy<P extends { clock: { now(): Date } }>(
  ctx: Context,
  principal: Principal,
  platform: P,
): P & { audit: Audit; accountId: string } {
  return { ...platform, audit: auditOf(ctx, principal, platform), accountId: principal.accountId };
}

/**
 * What a caller outside any request passes (the operator CLI, which owns the database; a test calling the domain):
 * nothing is recorded. Named at each call site, so a change that records nothing says so.
 */
export const unaudited: Audit = { who: null, record: async () => undefined };

/**
 * Runs a bulk change as one change: `run` handles its items in the one transaction it is given (each item's own
 * transaction a savepoint of it), with a writer that records nothing for them, and `entry(count)` (for the count
 * `run` returns; null to record nothing, as for read marks) is recorded through `audit`, in the same transaction,
 * when anything was done.
 */
export async function auditAsOne(
  db: Db,
  audit: Audit,
  entry: (count: number) => Entry | null,
  run: (trx: Knex.Transaction, items: Audit) => Promise<number>,
): Promise<number> {
  return db.transaction(async (trx) => {
    const count = await run(trx, unaudited);
    const one = entry(count);
    if (one && count > 0) await audit.record(trx, one);
    return count;
  });
}

/** The names of what a change touched, never its values (a URL, a secret, an e-mail list stay out of the log). */
export const changedFields = (body: object) => ({ changed: Object.keys(body ?? {}).sort() });
