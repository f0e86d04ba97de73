import { Type } from '@sinclair/typebox';
import { idPattern } from '@intake/shared/contracts';
import { projectsAskedFor } from '@intake/shared/auth';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { parseMonth, usageReport } from '../domain/usage-report';
import { Usage } from '../domain/usage-report.schema';

export { Usage };

/** `GET /v1/usage`: the account's usage of one month. */
export const getUsage = route({
  method: 'GET',
  path: '/v1/usage',
  operationId: 'getUsage',
  summary: 'Usage of the account for the current (or a given) UTC month',
  description:
    '`used` is counted when a submission is accepted, the same number ingest enforces the quota ' +
    'on. Spam, bytes and the per-form and per-day breakdown are counted from the submission ' +
    'events, a moment later.',
  tags: ['Usage'],
  auth: 'management',
  query: Type.Object({
    month: Type.Optional(
      Type.String({
        pattern: '^(19|20|21)\\d{2}-(0[1-9]|1[0-2])$',
        description: '`YYYY-MM` (UTC); defaults to the current month',
      }),
    ),
    project_id: Type.Optional(
      Type.String({ pattern: idPattern('project'), description: 'only this project’s forms (see `project_ids`)' }),
    ),
  }),
  responses: { 200: { description: 'The usage', schema: Usage } },
  async handler(ctx, { query, principal }, { db, clock }: Platform) {
    ctx.body = await usageReport({
      db,
      accountId: principal.accountId,
      at: query.month ? parseMonth(query.month) : clock.now(),
      projects: projectsAskedFor(principal, query.project_id),
    });
  },
});

/** Usage's public routes. */
export const usageRoutes = [getUsage];
