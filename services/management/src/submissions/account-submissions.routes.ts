import { Type } from '@sinclair/typebox';
import { FormProject, formProject, idPattern, toTimestamp } from '@intake/shared/contracts';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { Nullable, Page, Timestamp } from '../platform/schemas';
import { presentSubmission, Submission } from './submissions.routes';
import { listSubmissionTrash } from './submission-trash';
import type { TrashedSubmissionRow } from './submission-trash.repository';

const DAY_MS = 86_400_000;

/** A submission listed across forms: named with its form and the form's client, and when it went to the trash. */
const AccountSubmission = Type.Object(
  {
    ...Submission.properties,
    form: Type.Object({ id: Type.String({ description: '`frm_...`' }), name: Type.String() }),
    project: FormProject,
    deleted_at: Nullable(Timestamp),
    purge_at: Nullable(
      Type.String({
        format: 'date-time',
        description: 'of a submission in the trash: when it is deleted for good (`deleted_at` + TRASH_DAYS); else null',
      }),
    ),
  },
  { additionalProperties: false },
);

function presentTrashed(row: TrashedSubmissionRow, trashDays: number) {
  return {
    ...presentSubmission(row),
    form: { id: row.form_id, name: row.form_name },
    project: formProject(row),
    deleted_at: toTimestamp(row.deleted_at),
    purge_at: toTimestamp(new Date(row.deleted_at.getTime() + trashDays * DAY_MS)),
  };
}

/** `GET /v1/submissions?deleted=true`: the submission trash, across the account's forms or of one. */
export const listAccountSubmissionsRoute = route({
  method: 'GET',
  path: '/v1/submissions',
  operationId: 'listAccountSubmissions',
  summary:
    'List the submissions in the trash across forms (or one form’s, or one project’s), most recently deleted first',
  description:
    'A deleted submission stays in the trash TRASH_DAYS (30): `POST /v1/submissions/restore` brings it back, ' +
    '`DELETE /v1/submissions/:id?permanently=true` deletes it now. The submissions of a form in the trash are not ' +
    'listed: they come back with their form (`GET /v1/forms?deleted=true`). A member or key limited to projects sees ' +
    'those projects’ only.',
  tags: ['Submissions'],
  auth: 'management',
  query: Type.Object({
    deleted: Type.Literal(true, { description: '`true`: the submissions in the trash' }),
    form_id: Type.Optional(Type.String({ pattern: idPattern('form'), description: 'only this form’s' })),
    project_id: Type.Optional(
      Type.String({ pattern: idPattern('project'), description: 'only this project’s forms’' }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
    cursor: Type.Optional(Type.String({ maxLength: 500, description: '`next_cursor` of the previous page' })),
  }),
  responses: { 200: { description: 'One page; `next_cursor` is null on the last', schema: Page(AccountSubmission) } },
  async handler(ctx, { query, principal }, { db, clock, config }: Platform) {
    const { rows, nextCursor } = await listSubmissionTrash({
      db,
      clock,
      accountId: principal.accountId,
      trashDays: config.TRASH_DAYS,
      formId: query.form_id,
      // The guard let a limited principal name only its own projects and forms.
      projects: query.project_id ? [query.project_id] : principal.projectIds,
      limit: query.limit,
      cursor: query.cursor,
    });
    ctx.body = { data: rows.map((row) => presentTrashed(row, config.TRASH_DAYS)), next_cursor: nextCursor };
  },
});

export const accountSubmissionRoutes = [listAccountSubmissionsRoute];
