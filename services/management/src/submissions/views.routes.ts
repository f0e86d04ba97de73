import { Type } from '@sinclair/typebox';
import { problem, toTimestamp } from '@intake/shared/contracts';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { deleteView, saveView } from './saved-views';
import { findSavedViews, type SavedViewRow } from './saved-view.repository';
import { formExists } from '../webhooks/webhook.repository';
import { deleteRoute } from '../platform/delete-route';
import { IdParams, List, Timestamp } from '../platform/schemas';
import { Order, Status } from './submission-filters';
import { auditOf } from '../platform/audit-trail';

const Day = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}$',
  description: 'a day, `YYYY-MM-DD`, in the reader’s time zone',
});
const ViewFilters = Type.Object(
  {
    status: Type.Optional(Status),
    since: Type.Optional(Day),
    until: Type.Optional(Day),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    order: Type.Optional(Order),
  },
  { additionalProperties: false, description: 'the inbox’s filters as the console shows them' },
);
const View = Type.Object(
  {
    id: Type.String({ description: '`vw_...`' }),
    form_id: Type.String(),
    name: Type.String(),
    filters: ViewFilters,
    created_by: Type.Union([Type.String(), Type.Null()], { description: 'who saved it (an e-mail, a key’s name)' }),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
const TAGS = ['Submissions'];

const present = (row: SavedViewRow) => ({
  id: row.id,
  form_id: row.form_id,
  name: row.name,
  filters: row.filters,
  created_by: row.created_by,
  created_at: toTimestamp(row.created_at),
});

/** `GET /v1/forms/:id/views`. */
export const listViewsRoute = route({
  method: 'GET',
  path: '/v1/forms/:id/views',
  operationId: 'listSavedViews',
  summary: 'The form’s saved views (named inbox filters, shared in the account), by name',
  tags: TAGS,
  auth: 'management',
  params: IdParams('form', 'form id'),
  responses: { 200: { description: 'The views', schema: List(View) } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, { db }: Platform) {
    const { accountId } = principal;
    if (!(await formExists(db, accountId, params.id))) throw problem('not-found', `No form ${params.id}`);
    ctx.body = { data: (await findSavedViews(db, accountId, params.id)).map(present) };
  },
});

/** `POST /v1/forms/:id/views`. */
export const saveViewRoute = route({
  method: 'POST',
  path: '/v1/forms/:id/views',
  operationId: 'saveView',
  summary: 'Save the inbox’s filters under a name, for everyone in the account',
  tags: TAGS,
  auth: 'management',
  params: IdParams('form', 'form id'),
  body: Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 80, pattern: '\\S' }), filters: ViewFilters },
    { additionalProperties: false },
  ),
  responses: { 201: { description: 'Saved', schema: View } },
  problems: ['not-found', 'conflict'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const { db, clock } = platform;
    const view = await saveView({
      db,
      audit: auditOf(ctx, principal, platform),
      principal,
      formId: params.id,
      name: body.name.trim(),
      filters: body.filters,
      now: clock.now(),
    });
    ctx.status = 201;
    ctx.body = present(view);
  },
});

export const deleteViewRoute = deleteRoute({
  collection: '/v1/views',
  operationId: 'deleteSavedView',
  summary: 'Delete a saved view',
  tags: TAGS,
  kind: 'savedView',
  remove: deleteView,
});

export const viewRoutes = [listViewsRoute, saveViewRoute, deleteViewRoute];
