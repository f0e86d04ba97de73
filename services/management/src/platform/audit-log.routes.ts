import { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import { type Queryable } from '@intake/shared/base';
import { idPattern, isId, problem, toTimestamp } from '@intake/shared/contracts';
import { AUDIT_ACTIONS } from '@intake/shared/audit';
import { routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { findAuditEntries, findDefaultProjectId, findTargetNames, type AuditRow } from './audit-log.repository';
import { actionLabel, summarise } from './audit-words';
import { Page, Timestamp } from './schemas';
import { auditOf } from './audit-trail';

const Entry = Type.Object(
  {
    id: Type.String({ description: '`aud_...`' }),
    at: Timestamp,
    actor: Type.Object({
      type: Type.Union([
        Type.Literal('member'),
        Type.Literal('api_key'),
        Type.Literal('operator'),
        Type.Literal('system'),
      ]),
      id: Type.Union([Type.String(), Type.Null()]),
      label: Type.Union([Type.String(), Type.Null()], { description: 'a member’s e-mail, a key’s name or prefix' }),
    }),
    action: Type.String({ description: 'e.g. `member.invited`, `form.updated`, `submissions.exported`' }),
    target: Type.Union([
      Type.Object({
        type: Type.String(),
        id: Type.Union([Type.String(), Type.Null()]),
        name: Type.Union([Type.String(), Type.Null()], {
          description:
            'its name now (a form’s or account’s name, a webhook’s URL, a member’s e-mail, a key’s name); ' +
            'null for a submission or delivery, and for what was deleted since',
        }),
      }),
      Type.Null(),
    ]),
    project: Type.Union(
      [Type.Object({ id: Type.String(), name: Type.Union([Type.String(), Type.Null()]) }), Type.Null()],
      {
        description:
          'the project the target was in when the entry was written (its name now; null once deleted); null for ' +
          'what is in no project (members, keys, the account)',
      },
    ),
    summary: Type.String({
      description:
        'who did what to what, in words, e.g. `ada@example.com moved 59 submissions of the form “Contact” to the trash.`',
    }),
    ip: Type.Union([Type.String(), Type.Null()]),
    user_agent: Type.Union([Type.String(), Type.Null()]),
    details: Type.Record(Type.String(), Type.Unknown(), {
      description: 'what changed: names and roles, never secret values',
    }),
  },
  { additionalProperties: false },
);

const Filters = {
  action: Type.Optional(Type.String({ maxLength: 100, description: 'only this action' })),
  actor: Type.Optional(Type.String({ maxLength: 320, description: 'only this actor: its id, or a member’s e-mail' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after this time' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'entries before this time' })),
  project_id: Type.Optional(
    Type.String({ pattern: idPattern('project'), description: 'only entries about what lies in this project' }),
  ),
};
const FilterQuery = Type.Object(Filters);
type FilterValues = Static<typeof FilterQuery>;

/** The entries of a page as the API shows them: their targets named as they are now, and each said in words. */
async function present(db: Queryable, accountId: string, rows: AuditRow[]) {
  const targets = rows.flatMap((r) => [
    ...(r.target_type && r.target_id ? [{ type: r.target_type, id: r.target_id }] : []),
    ...(r.project_id ? [{ type: 'project', id: r.project_id }] : []),
  ]);
  const [names, defaultProject] = await Promise.all([
    findTargetNames(db, accountId, targets),
    findDefaultProjectId(db, accountId),
  ]);
  return rows.map((row) => {
    const actor = { type: row.actor_type, id: row.actor_id, label: row.actor_label };
    const target = row.target_type
      ? {
          type: row.target_type,
          id: row.target_id,
          name: (row.target_id && names.get(`${row.target_type}:${row.target_id}`)) || null,
        }
      : null;
    return {
      id: row.id,
      at: toTimestamp(row.at),
      actor,
      action: row.action,
      target,
      project: row.project_id ? { id: row.project_id, name: names.get(`project:${row.project_id}`) ?? null } : null,
      summary: summarise({
        actor,
        action: row.action,
        target,
        details: row.details,
        // The client of what lies in a project other than the default, by its name now (a project names itself).
        client:
          row.project_id && row.project_id !== defaultProject && row.target_type !== 'project'
            ? names.get(`project:${row.project_id}`)
            : undefined,
      }),
      ip: row.ip,
      user_agent: row.user_agent,
      details: row.details,
    };
  });
}

const instant = (value: string, field: string) => {
  const date = new Date(value);
  if (Number.isNaN(date.getTime()))
    throw problem('validation-failed', `query/${field} is not a time`, {
      errors: [{ field: `query/${field}`, message: 'is not a time' }],
    });
  return date;
};

/** Newest first, from the entry before `beforeId` when given, with the filters. */
function page(
  db: Queryable,
  accountId: string,
  f: FilterValues,
  limit: number,
  beforeId?: string,
): Promise<AuditRow[]> {
  return findAuditEntries(db, {
    accountId,
    action: f.action,
    actor: f.actor,
    projectId: f.project_id,
    since: f.since ? instant(f.since, 'since') : undefined,
    until: f.until ? instant(f.until, 'until') : undefined,
    beforeId,
    limit,
  });
}

const decodeCursor = (cursor: string) => {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!isId('auditEntry', id))
    throw problem('validation-failed', 'The cursor is not one this API returned', {
      errors: [{ field: 'query/cursor', message: 'is not a valid cursor' }],
    });
  return id;
};

const auditLogRoute = routeGroup({ tags: ['Audit log'], auth: 'management', role: 'admin' });

/** `GET /v1/audit-log`. */
export const listAuditLogRoute = auditLogRoute({
  method: 'GET',
  path: '/v1/audit-log',
  operationId: 'listAuditLog',
  summary: 'The account’s audit log, newest first, a page at a time',
  description: `Every change and sensitive read (exports), append-only. Kept AUDIT_RETENTION_DAYS (365 by default).`,
  query: Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: '`next_cursor` of the previous page' })),
    ...Filters,
  }),
  responses: { 200: { description: 'One page; `next_cursor` is null on the last', schema: Page(Entry) } },
  async handler(ctx, { query, principal }, { db }: Platform) {
    const rows = await page(
      db,
      principal.accountId,
      query,
      query.limit + 1,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    const more = rows.length > query.limit;
    const shown = rows.slice(0, query.limit);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      data: await present(db, principal.accountId, shown),
      next_cursor: more ? Buffer.from((shown[shown.length - 1] as AuditRow).id).toString('base64url') : null,
    };
  },
});

/** `GET /v1/audit-log/export.ndjson`. */
export const exportAuditLogRoute = auditLogRoute({
  method: 'GET',
  path: '/v1/audit-log/export.ndjson',
  operationId: 'exportAuditLog',
  summary: 'Export the audit log as NDJSON (one entry per line, newest first), streamed',
  query: FilterQuery,
  responses: {
    200: {
      description: 'The entries, as an attachment',
      contentType: 'application/x-ndjson',
      schema: Type.String(),
      headers: {
        'Content-Disposition': { description: '`attachment; filename="audit-log.ndjson"`', schema: Type.String() },
      },
    },
  },
  async handler(ctx, { query, principal }, platform: Platform) {
    const { db } = platform;
    // Checked before the answer starts, so a bad filter is a problem, not a broken stream.
    if (query.since) instant(query.since, 'since');
    if (query.until) instant(query.until, 'until');
    // Exporting the log is itself a sensitive read, and recorded (before the stream reads it: the export holds it).
    await auditOf(ctx, principal, platform).record(db, { action: 'audit_log.exported', details: { filters: query } });
    async function* lines() {
      let before: string | undefined;
      for (;;) {
        const rows = await page(db, principal.accountId, query, 500, before);
        for (const entry of await present(db, principal.accountId, rows)) yield `${JSON.stringify(entry)}\n`;
        if (rows.length < 500) return;
        before = (rows[rows.length - 1] as AuditRow).id;
      }
    }
    ctx.set('Content-Disposition', 'attachment; filename="audit-log.ndjson"');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'application/x-ndjson';
    ctx.body = Readable.from(lines());
  },
});

/** `GET /v1/audit-log/actions`: what the log's action filter can be, in words. */
export const listAuditActionsRoute = auditLogRoute({
  method: 'GET',
  path: '/v1/audit-log/actions',
  operationId: 'listAuditActions',
  summary: 'The actions the audit log records, each with its name in words (the options of its action filter)',
  responses: {
    200: {
      description: 'Every action',
      schema: Type.Object({ data: Type.Array(Type.Object({ action: Type.String(), label: Type.String() })) }),
    },
  },
  handler(ctx) {
    ctx.body = { data: AUDIT_ACTIONS.map((action) => ({ action, label: actionLabel(action) })) };
  },
});

export const auditLogRoutes = [listAuditLogRoute, listAuditActionsRoute, exportAuditLogRoute];
