import { Type, type Static } from '@sinclair/typebox';
import { FormProject } from '@intake/shared/contracts';

/** The body of `GET /v1/usage`: one schema for the route's validation, the OpenAPI document and the domain's type. */
const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601 UTC with milliseconds' });
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Breakdown = {
  received: Count('submissions accepted as genuine (counted toward the quota)'),
  spam: Count('submissions caught as spam (not counted)'),
  file_bytes: Count('bytes of files uploaded with the received submissions'),
};

export const Usage = Type.Object(
  {
    account_id: Type.String(),
    plan: Type.Object({
      id: Type.String({ description: '`free`, `pro`, `team` or another plan row' }),
      name: Type.String(),
    }),
    period: Type.Object(
      {
        month: Type.String({ pattern: '^\\d{4}-\\d{2}$', description: 'the UTC calendar month, `YYYY-MM`' }),
        start: Timestamp,
        end: Type.String({
          format: 'date-time',
          description: 'exclusive: the first instant of the next month, when the quota resets',
        }),
      },
      { description: 'the UTC calendar month the figures are for' },
    ),
    limit: Count('the monthly submission quota: the account’s override, else its plan’s'),
    used: Count(
      'received submissions this month: the number the quota is enforced on; in a report limited to projects, ' +
        'those projects’ forms’ received submissions (as counted from the submission events)',
    ),
    remaining: Count(
      'what is left of the account’s quota this month (its limit less the whole account’s used), never below 0; ' +
        'at 0 ingest answers 402 quota-exceeded, to every form of the account',
    ),
    spam: Count('submissions caught as spam this month (not counted toward the quota)'),
    file_bytes: Count('bytes of files uploaded this month'),
    stored_file_bytes: Count('bytes of all files the account stores now, whatever the month'),
    project_ids: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description:
        'the projects the report is limited to (`project_id`, or the caller’s own limit): `spam`, `file_bytes`, ' +
        '`used`, `stored_file_bytes`, `forms` and `days` are then those projects’ forms’ (as they are now), while ' +
        '`limit` and `remaining` stay the account’s, whose quota ingest enforces; null: the whole account',
    }),
    forms: Type.Array(
      Type.Object({
        form_id: Type.String(),
        name: Type.Union([Type.String(), Type.Null()], { description: 'null once the form is deleted' }),
        slug: Type.Union([Type.String(), Type.Null()], { description: 'null once the form is deleted' }),
        project: Type.Union(FormProject.anyOf, {
          description:
            'the project the form is in, named with it; null when that is the account’s default project, or once ' +
            'the form is deleted',
        }),
        ...Breakdown,
      }),
      { description: 'forms with any submission this month' },
    ),
    days: Type.Array(
      Type.Object({ date: Type.String({ format: 'date', description: 'UTC day, `YYYY-MM-DD`' }), ...Breakdown }),
      { description: 'every day of the month, zeros included' },
    ),
  },
  { $id: 'Usage' },
);

export type UsageReport = Static<typeof Usage>;
