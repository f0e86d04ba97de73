import { Type } from '@sinclair/typebox';
import { FormProject, formProject, idPattern, problem, toTimestamp } from '@intake/shared/contracts';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { Nullable, Page, Timestamp } from '../platform/schemas';
import { presentSubmission, Submission } from './submissions.routes';
import { listSubmissionTrash } from './submission-trash';
import type { TrashedSubmissionRow } from './submission-trash.repository';
import { pageOfFoundSubmissions, type FoundSubmissionRow } from './account-search.repository';
import { decodeCursor, encodeCursor } from '../platform/cursor';

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

function presentFound(row: FoundSubmissionRow) {
  return {
    ...presentSubmission(row),
    form: { id: row.form_id, name: row.form_name },
    project: formProject(row),
    deleted_at: null,
    purge_at: null,
  };
}

/** One page of what a search across the account's forms (or one project's) finds, newest first. */
async function searchAcrossForms(
  db: Platform['db'],
  props: { accountId: string; q: string; projects: string[] | null; limit: number; cursor?: string },
) {
  const after = props.cursor ? decodeCursor(props.cursor, 'submission') : undefined;
  const rows = await pageOfFoundSubmissions(db, { ...props, after, limit: props.limit + 1 });
  const page = rows.slice(0, props.limit);
  const last = page[page.length - 1];
  return {
    data: page.map(presentFound),
    next_cursor: rows.length > props.limit && last ? encodeCursor(last.received_at, last.id) : null,
  };
}

const needsQ = () =>
  problem('validation-failed', 'Name what to search for (q), or ask for the trash (deleted=true)', {
    errors: [{ field: 'query/q', message: 'is required unless deleted is true' }],
  });

/** `GET /v1/submissions`: a search across the account's forms, or (`deleted=true`) the submission trash. */
export const listAccountSubmissionsRoute = route({
  method: 'GET',
  path: '/v1/submissions',
  operationId: 'listAccountSubmissions',
  summary:
    'Search the received submissions of every form (or one project’s), newest first; or, `deleted=true`, list the ' +
    'submissions in the trash, most recently deleted first',
  description:
    '`q` is searched as a form’s inbox searches it (every value, ignoring case and accents), across the forms the ' +
    'member or key sees, spam and forms in the trash left out; each submission names its form and client. With ' +
    '`deleted=true` it lists the trash instead: a deleted submission stays there TRASH_DAYS (30), ' +
    '`POST /v1/submissions/restore` brings it back, `DELETE /v1/submissions/:id?permanently=true` deletes it now; the ' +
    'submissions of a form in the trash are not listed (they come back with their form, `GET /v1/forms?deleted=true`). ' +
    'A member or key limited to projects sees those projects’ only.',
  tags: ['Submissions'],
  auth: 'management',
  query: Type.Object({
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'text to find (required unless `deleted=true`)' }),
    ),
    deleted: Type.Optional(Type.Boolean({ description: '`true`: the submissions in the trash instead' })),
    form_id: Type.Optional(
      Type.String({ pattern: idPattern('form'), description: 'with `deleted=true`: only this form’s' }),
    ),
    project_id: Type.Optional(
      Type.String({ pattern: idPattern('project'), description: 'only this project’s forms’' }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
    cursor: Type.Optional(Type.String({ maxLength: 500, description: '`next_cursor` of the previous page' })),
  }),
  responses: { 200: { description: 'One page; `next_cursor` is null on the last', schema: Page(AccountSubmission) } },
  problems: ['not-found'],
  async handler(ctx, { query, principal }, { db, clock, config }: Platform) {
    // The guard let a limited principal name only its own projects and forms.
    const projects = query.project_id ? [query.project_id] : principal.projectIds;
    const { accountId } = principal;
    if (query.deleted !== true) {
      if (query.q === undefined || query.form_id !== undefined) throw needsQ();
      ctx.body = await searchAcrossForms(db, {
        accountId,
        q: query.q,
        projects,
        limit: query.limit,
        cursor: query.cursor,
      });
      return;
    }
    const { rows, nextCursor } = await listSubmissionTrash({
      db,
      clock,
      accountId,
      trashDays: config.TRASH_DAYS,
      formId: query.form_id,
      projects,
      limit: query.limit,
      cursor: query.cursor,
    });
    ctx.body = { data: rows.map((row) => presentTrashed(row, config.TRASH_DAYS)), next_cursor: nextCursor };
  },
});

export const accountSubmissionRoutes = [listAccountSubmissionsRoute];
