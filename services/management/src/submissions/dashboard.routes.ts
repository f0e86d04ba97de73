import { Type } from '@sinclair/typebox';
import { toTimestamp } from '@intake/shared/contracts';
import { routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { accountDashboard, projectDashboard } from './dashboard';
import { IdParams, Nullable, Timestamp } from '../platform/schemas';

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Day = Type.Object(
  {
    date: Type.String({ format: 'date', description: 'a UTC day, `YYYY-MM-DD`' }),
    received: Count('submissions received that day'),
    spam: Count('spam caught that day'),
  },
  { additionalProperties: false },
);
const Days = Type.Array(Day, { description: 'every day of the window, oldest first, zeros included' });
const Sums = {
  received: Count('submissions received in the window'),
  spam: Count('spam caught in the window (the spam share: spam / (received + spam))'),
  spam_week: Count('spam caught in the last 7 days'),
  failing_webhooks: Count('webhooks failing now (retrying, or turned off after failing)'),
};
const Window = {
  from: Type.String({ format: 'date', description: 'the first UTC day of the window' }),
  to: Type.String({ format: 'date', description: 'its last: today (UTC)' }),
};
const ProjectSummary = {
  id: Type.String({ description: '`prj_...`' }),
  name: Type.String(),
  is_default: Type.Boolean(),
  form_count: Count('its forms out of the trash'),
};
const LastDay = Nullable(
  Type.String({ format: 'date', description: 'the last UTC day of the window anything was received' }),
);

const AccountDashboard = Type.Object(
  {
    ...Window,
    totals: Type.Object({ ...Sums, last_day: LastDay }, { additionalProperties: false }),
    days: Days,
    projects: Type.Array(
      Type.Object(
        {
          ...ProjectSummary,
          ...Sums,
          unread: Count('received submissions of its forms out of the trash nobody opened, up to 1,000 a form'),
          unread_capped: Type.Boolean({
            description: 'true when a form of it has 1,000 or more (`unread` is a floor)',
          }),
          last_day: LastDay,
          days: Days,
        },
        { additionalProperties: false },
      ),
      { description: 'the projects the caller sees, the default first, then by name' },
    ),
  },
  { additionalProperties: false },
);

const ProjectDashboard = Type.Object(
  {
    project: Type.Object(ProjectSummary, { additionalProperties: false }),
    ...Window,
    totals: Type.Object({ ...Sums, last_day: LastDay }, { additionalProperties: false }),
    days: Days,
    forms: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          name: Type.String(),
          slug: Type.String(),
          status: Type.String(),
          unread: Count('received submissions out of the trash nobody opened, counted up to 1,000'),
          unread_capped: Type.Boolean({ description: 'true when there are 1,000 or more (“999+”)' }),
          last_submission_at: Nullable(Timestamp),
          ...Sums,
          days: Days,
        },
        { additionalProperties: false },
      ),
      { description: 'a page of its forms, newest first' },
    ),
    next_cursor: Nullable(Type.String({ description: 'pass as `cursor` for the next page of forms' })),
  },
  { additionalProperties: false },
);

const DaysQuery = Type.Integer({
  minimum: 7,
  maximum: 90,
  default: 30,
  description: 'the window in UTC days up to today (30 by default; 90 at most)',
});

const dashboardRoute = routeGroup({ tags: ['Projects'], auth: 'management' });

export const getAccountDashboardRoute = dashboardRoute({
  method: 'GET',
  path: '/v1/dashboard',
  operationId: 'getAccountDashboard',
  summary: 'The account at a glance: per project its submissions, spam and failing webhooks, and a chart per day',
  description:
    'Counted from the daily usage rollup and the webhooks, never by scanning submissions, so it answers as fast for ' +
    '500 forms with a million submissions as for ten. A member or key limited to projects sees theirs.',
  query: Type.Object({ days: DaysQuery }),
  responses: { 200: { description: 'The dashboard', schema: AccountDashboard } },
  async handler(ctx, { query, principal }, { db, clock }: Platform) {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await accountDashboard({ db, principal, days: query.days, now: clock.now() });
  },
});

export const getProjectDashboardRoute = dashboardRoute({
  method: 'GET',
  path: '/v1/projects/:id/dashboard',
  operationId: 'getProjectDashboard',
  summary: 'A project at a glance: a page of its forms with unread counts, last submission, spam and a chart each',
  params: IdParams('project', 'project id'),
  query: Type.Object({
    days: DaysQuery,
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
    cursor: Type.Optional(Type.String({ maxLength: 500, description: '`next_cursor` of the previous page' })),
  }),
  responses: { 200: { description: 'The dashboard', schema: ProjectDashboard } },
  problems: ['not-found'],
  async handler(ctx, { params, query, principal }, { db, clock }: Platform) {
    const board = await projectDashboard({
      db,
      accountId: principal.accountId,
      projectId: params.id,
      days: query.days,
      limit: query.limit,
      cursor: query.cursor,
      now: clock.now(),
    });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      ...board,
      forms: board.forms.map((f) => ({
        ...f,
        last_submission_at: f.last_submission_at ? toTimestamp(f.last_submission_at) : null,
      })),
    };
  },
});

export const dashboardRoutes = [getAccountDashboardRoute, getProjectDashboardRoute];
