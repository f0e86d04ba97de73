import type { Context } from 'koa';
import {
  auditContext,
  recordAudit,
  type AuditEntry,
  type Platform,
  type RouteInput,
  type RouteList,
} from '@intake/shared';

type Input = RouteInput<Record<string, string>, Record<string, unknown>, Record<string, unknown>>;
type Entry = Pick<AuditEntry, 'action' | 'target' | 'details'>;
/** What one successful request records: zero or more entries, read from its input and its answer. */
type Rule = (input: Input, answer: Record<string, unknown>) => Entry[];

const one = (entry: Entry): Entry[] => [entry];
const str = (value: unknown) => (typeof value === 'string' ? value : null);
/** The names of what a change touched, never its values (a URL, a secret, an e-mail list stay out of the log). */
const changed = (body: Record<string, unknown>) => ({ changed: Object.keys(body ?? {}).sort() });

/**
 * The audit entries of the management routes that do not record their own (members, sign-in, the audit log
 * itself do), by operation. Kept apart from the routes so each stays about its resource.
 */
const RULES: Record<string, Rule> = {
  createApiKey: ({ body }, a) =>
    one({
      action: 'api_key.created',
      target: { type: 'api_key', id: str(a['id']) },
      details: { type: body['type'], role: a['role'] },
    }),
  revokeApiKey: ({ params }) =>
    one({ action: 'api_key.revoked', target: { type: 'api_key', id: params['id'] ?? null } }),
  createForm: (_i, a) =>
    one({ action: 'form.created', target: { type: 'form', id: str(a['id']) }, details: { slug: a['slug'] } }),
  updateForm: ({ params, body }) =>
    one({ action: 'form.updated', target: { type: 'form', id: params['id'] ?? null }, details: changed(body) }),
  deleteForm: ({ params }) => one({ action: 'form.deleted', target: { type: 'form', id: params['id'] ?? null } }),
  createWebhook: ({ params }, a) =>
    one({
      action: 'webhook.created',
      target: { type: 'webhook', id: str(a['id']) },
      details: { form_id: params['id'] },
    }),
  updateWebhook: ({ params, body }) => {
    const target = { type: 'webhook', id: params['id'] ?? null };
    const { rotate_secret: rotate, ...rest } = body;
    return [
      ...(Object.keys(rest).length > 0 ? [{ action: 'webhook.updated' as const, target, details: changed(rest) }] : []),
      ...(rotate === true ? [{ action: 'webhook.secret_rotated' as const, target }] : []),
    ];
  },
  deleteWebhook: ({ params }) =>
    one({ action: 'webhook.deleted', target: { type: 'webhook', id: params['id'] ?? null } }),
  testWebhook: ({ params }) => one({ action: 'webhook.tested', target: { type: 'webhook', id: params['id'] ?? null } }),
  updateSubmission: ({ params, body }) =>
    one({
      action: 'submission.status_changed',
      target: { type: 'submission', id: params['id'] ?? null },
      details: { status: body['status'] },
    }),
  deleteSubmission: ({ params }) =>
    one({ action: 'submission.deleted', target: { type: 'submission', id: params['id'] ?? null } }),
  bulkSubmissions: ({ body }, a) =>
    (Array.isArray(a['done']) ? (a['done'] as string[]) : []).map((id) =>
      body['action'] === 'delete'
        ? { action: 'submission.deleted' as const, target: { type: 'submission', id } }
        : {
            action: 'submission.status_changed' as const,
            target: { type: 'submission', id },
            details: { status: body['action'] },
          },
    ),
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
  deleteCurrentSession: () => one({ action: 'session.signed_out' }),
  exportAuditLog: ({ query }) => one({ action: 'audit_log.exported', details: { filters: query } }),
};

/** Routes that write their own entries (in the same transaction as their change). */
const SELF_AUDITED = new Set([
  'inviteMember',
  'updateMember',
  'removeMember',
  'endMySession',
  'updateAccount',
  'findDataSubjectSubmissions',
  'exportDataSubject',
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
 * Wraps the management routes so every successful change (and export) is appended to the audit log after its
 * handler. A state-changing route without a rule of its own (one added later, say) is still recorded, as
 * `operation.<operationId>`; reads are recorded only where a rule says so (exports). The member routes record
 * their own entries, inside their transactions.
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
        await def.handler(ctx, input, platform);
        if (ctx.status >= 400) return;
        const answer = ctx.body && typeof ctx.body === 'object' && !('pipe' in ctx.body) ? ctx.body : {};
        const at = platform.clock.now();
        for (const entry of rule(input as unknown as Input, answer as Record<string, unknown>))
          await recordAudit(platform.db, { ...auditContext(ctx, input.principal), ...entry }, at);
      },
    };
  });
}

const targetOf = (params: Record<string, string>) => {
  const id = params['id'];
  return id ? { type: id.split('_')[0] ?? 'resource', id } : undefined;
};
