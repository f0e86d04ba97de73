import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import {
  auditContext,
  recordAudit,
  type AuditEntry,
  type Db,
  type Platform,
  type Queryable,
  type RouteInput,
  type RouteList,
} from '@intake/shared';

type Input = RouteInput<Record<string, string>, Record<string, unknown>, Record<string, unknown>>;
/** What a change's audit entry says of it (who made it, and from where, the request knows). */
export type Entry = Pick<AuditEntry, 'action' | 'target' | 'details'>;

/** The request a change is made in: who, from where, and whether the change wrote its own entries. */
interface AuditScope {
  context: Pick<AuditEntry, 'accountId' | 'actor' | 'ip' | 'userAgent'>;
  at: Date;
  written: boolean;
  /** Inside `auditAsOne`: the items' own entries are folded into its one entry. */
  folded?: boolean;
}
const scope = new AsyncLocalStorage<AuditScope>();

/**
 * Writes a change's audit entries in the change's own transaction (`trx`), with who made it and from where as its
 * request knows them: the change and its record commit together or not at all. Outside a management request (the
 * operator CLI, the purge, a test calling the domain) it writes nothing; `withAuditTrail` then records nothing either.
 */
export async function auditChange(trx: Queryable, entries: Entry[]): Promise<void> {
  const current = scope.getStore();
  if (!current) return;
  current.written = true;
  if (current.folded) return;
  for (const entry of entries) await recordAudit(trx, { ...current.context, ...entry }, current.at);
}

/**
 * Runs a bulk change as one change: `run` handles its items in the one transaction it is given (each item's own
 * transaction a savepoint of it), their own entries are not written, and `entry(count)` (for the count `run` returns;
 * null to record nothing, as for read marks) is, in the same transaction, when anything was done.
 */
export async function auditAsOne(
  db: Db,
  entry: (count: number) => Entry | null,
  run: (trx: Knex.Transaction) => Promise<number>,
): Promise<number> {
  const outer = scope.getStore();
  return db.transaction(async (trx) => {
    const count = outer ? await scope.run({ ...outer, folded: true }, () => run(trx)) : await run(trx);
    const one = entry(count);
    if (outer) {
      outer.written = true;
      if (one && count > 0) await recordAudit(trx, { ...outer.context, ...one }, outer.at);
    }
    return count;
  });
}

/** Says a request changed nothing worth recording (so `withAuditTrail` records nothing for it after either). */
export function nothingToAudit(): void {
  const current = scope.getStore();
  if (current) current.written = true;
}

/** The names of what a change touched, never its values (a URL, a secret, an e-mail list stay out of the log). */
export const changedFields = (body: object) => ({ changed: Object.keys(body ?? {}).sort() });
/** What one successful request records: zero or more entries, read from its input and its answer. */
type Rule = (input: Input, answer: Record<string, unknown>) => Entry[];

const one = (entry: Entry): Entry[] => [entry];

/**
 * The audit entries of what is not a change of the database but is recorded all the same, by operation: a test
 * ping, a replay asked of the delivery service, an export. Every change writes its own entries, in its transaction
 * (`auditChange`: forms, webhooks, submissions, API keys, replays queued, sign-out; members, sign-in and the account
 * in their own code).
 */
const RULES: Record<string, Rule> = {
  testWebhook: ({ params }) => one({ action: 'webhook.tested', target: { type: 'webhook', id: params['id'] ?? null } }),
  exportSubmissionsCsv: exported('csv'),
  exportSubmissionsNdjson: exported('ndjson'),
  exportSubmissionsXlsx: exported('xlsx'),
  replayDelivery: ({ params }) =>
    one({
      action: 'deliveries.replayed',
      target: { type: 'delivery', id: params['id'] ?? null },
      details: { count: 1 },
    }),
  replayFailedDeliveries: ({ params }, a) =>
    one({
      action: 'deliveries.replayed',
      target: { type: 'webhook', id: params['id'] ?? null },
      details: { count: Array.isArray(a['replayed']) ? a['replayed'].length : 0 },
    }),
  exportAuditLog: ({ query }) => one({ action: 'audit_log.exported', details: { filters: query } }),
};

/** Routes that write their own entries (in the same transaction as their change). */
const SELF_AUDITED = new Set([
  'inviteMember',
  'updateMember',
  'removeMember',
  'resendInvitation',
  'endMySession',
  'updateAccount',
  'findDataSubjectSubmissions',
  'exportDataSubject',
  'exportDataSubjectXlsx',
  'eraseDataSubject',
]);

function exported(format: 'csv' | 'ndjson' | 'xlsx'): Rule {
  return ({ params, query }) =>
    one({
      action: 'submissions.exported',
      target: { type: 'form', id: params['id'] ?? null },
      details: { format, filters: Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) },
    });
}

/**
 * Wraps the management routes so every successful change (and export) is in the audit log. A change writes its own
 * entries in its transaction (`auditChange`); one that did not (a route added later, say) is recorded after its
 * handler by its rule here, or as `operation.<operationId>`; reads are recorded only where a rule says so (exports).
 * The member routes record their own entries, inside their transactions.
 */
export function withAuditTrail(routes: RouteList<Platform>): RouteList<Platform> {
  return routes.map((def) => {
    if (def.auth !== 'management' || SELF_AUDITED.has(def.operationId)) return def;
    const rule: Rule | undefined =
      RULES[def.operationId] ??
      (def.method === 'GET'
        ? undefined
        : ({ params }) => one({ action: `operation.${def.operationId}`, target: targetOf(params), details: {} }));
    if (!rule) return def;
    return {
      ...def,
      async handler(ctx: Context, input, platform: Platform) {
        const request: AuditScope = {
          context: auditContext(ctx, input.principal),
          at: platform.clock.now(),
          written: false,
        };
        await scope.run(request, () => def.handler(ctx, input, platform));
        if (ctx.status >= 400 || request.written) return;
        const answer = ctx.body && typeof ctx.body === 'object' && !('pipe' in ctx.body) ? ctx.body : {};
        for (const entry of rule(input as unknown as Input, answer as Record<string, unknown>))
          await recordAudit(platform.db, { ...request.context, ...entry }, request.at);
      },
    };
  });
}

const targetOf = (params: Record<string, string>) => {
  const id = params['id'];
  return id ? { type: id.split('_')[0] ?? 'resource', id } : undefined;
};
