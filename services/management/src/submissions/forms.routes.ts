import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import {
  FormProject,
  idPattern,
  MailFromName,
  NotificationSchedule,
  NotificationTemplate,
  SLUG_PATTERN,
  SpamFilter,
  SpamModelScope,
  SpamRules,
  toTimestamp,
  VisitorPages,
} from '@intake/shared/contracts';
import { projectsAskedFor } from '@intake/shared/auth';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import {
  createForm,
  deleteForm,
  deleteFormForGood,
  duplicateForm,
  getForm,
  listForms,
  restoreForm,
  updateForm,
} from './forms';
import type { FormRow } from './form.repository';
import { placesOfForms } from './projects';
import { INHERITABLE_SETTINGS, type InheritableSetting } from './form-defaults';
import { FORM_TEMPLATE_NAMES, templatesDescription } from './form-templates';
import { AutoresponseSettings } from './autoresponse-status';
import { getRateLimitRoute, RateLimitField } from './rate-limit';
import { IdParams, Nullable, Page, Timestamp } from '../platform/schemas';
import { deleteRoute } from '../platform/delete-route';
import { changeBy } from '../platform/audit-trail';

const Status = Type.Union([Type.Literal('live'), Type.Literal('paused'), Type.Literal('draft')], {
  description: 'only `live` forms accept posts; any transition is allowed',
});
const Provider = Type.Union([Type.Literal('turnstile'), Type.Literal('hcaptcha'), Type.Literal('recaptcha')]);
const Url = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 });
const Inheritable = Type.Union(
  INHERITABLE_SETTINGS.map((k) => Type.Literal(k)),
  { description: 'a setting a form inherits from its project unless it sets it itself' },
);

const Form = Type.Object(
  {
    id: Type.String({ description: '`frm_...`' }),
    project_id: Type.String({ description: '`prj_...`: the project it is in' }),
    project: FormProject,
    name: Type.String(),
    slug: Type.String(),
    status: Status,
    honeypot_field: Type.String(),
    bot_challenge: Nullable(Type.Object({ provider: Provider }, { description: 'the secret is never returned' })),
    notify_emails: Type.Array(Type.String()),
    redirect_url: Nullable(Type.String()),
    allowed_origins: Type.Array(Type.String()),
    spam_filter: SpamFilter,
    spam_rules: SpamRules,
    spam_model: SpamModelScope,
    autoresponse: Nullable(AutoresponseSettings),
    retention_days: Nullable(Type.Integer({ description: 'submissions older than this many days are deleted' })),
    spam_retention_days: Nullable(Type.Integer({ description: 'spam older than this many days is deleted' })),
    delete_after_delivery: Type.Boolean({
      description: 'payload and files deleted once every webhook delivery succeeded and the e-mail is sent',
    }),
    rate_limit: RateLimitField,
    mail_from_name: Nullable(Type.String()),
    notification_template: Nullable(NotificationTemplate),
    notification_schedule: NotificationSchedule,
    pages: Nullable(VisitorPages),
    time_zone: Type.String({ description: 'the IANA time zone its mails give times in' }),
    inherited: Type.Array(Inheritable, {
      description:
        'the settings the form takes from its project’s `form_defaults` (each value above is the project’s, and ' +
        'changes with it); any other setting the form sets itself',
    }),
    ingest_url: Type.String({ description: '`{PUBLIC_BASE_URL}/v1/f/<slug>`: where the site posts' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    deleted_at: Type.Union([Timestamp, Type.Null()], {
      description: 'when it went to the trash (`GET /v1/forms?deleted=true` lists those); null for every other form',
    }),
    purge_at: Type.Union([Timestamp, Type.Null()], {
      description: 'of a form in the trash: when it is deleted for good (`deleted_at` + TRASH_DAYS); else null',
    }),
  },
  { additionalProperties: false },
);

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  project_id: Type.String({
    pattern: idPattern('project'),
    description:
      'the project it is in (`PATCH` moves it, with its submissions, webhooks and views). Left out on creation: the ' +
      'account’s default project (for a member or key limited to projects without it, the first of theirs)',
  }),
  slug: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: SLUG_PATTERN,
    description: 'URL-safe: lower-case letters, digits and inner hyphens; generated from the name when absent',
  }),
  status: Status,
  honeypot_field: Type.String({
    minLength: 1,
    maxLength: 100,
    // Not a challenge token field: those carry a value on every post from a page with the widget.
    pattern: '^(?!(bot-challenge|cf-turnstile|h-captcha|g-recaptcha)-response$)',
    description:
      'posts that fill this field are stored as spam; it is stripped from payloads; never a bot-challenge token field',
  }),
  bot_challenge: Nullable(
    Type.Object(
      {
        provider: Provider,
        secret: Type.String({
          minLength: 1,
          maxLength: 500,
          description: 'the provider secret key; stored encrypted, never returned',
        }),
      },
      { additionalProperties: false },
    ),
  ),
  notify_emails: Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: 20, uniqueItems: true }),
  redirect_url: Nullable(Url),
  allowed_origins: Type.Array(
    Type.String({
      pattern: '^https?://[^/\\s?#]+$',
      maxLength: 300,
      description: 'an origin, e.g. `https://example.com`',
    }),
    { maxItems: 50, uniqueItems: true, description: 'empty: any origin' },
  ),
  spam_filter: SpamFilter,
  spam_rules: SpamRules,
  spam_model: SpamModelScope,
  retention_days: Nullable(
    Type.Integer({
      minimum: 1,
      maximum: 3650,
      description:
        'delete submissions (with their files, deliveries and e-mail records) this many days after they ' +
        'arrive; null (the default) keeps them until deleted',
    }),
  ),
  spam_retention_days: Nullable(
    Type.Integer({
      minimum: 1,
      maximum: 3650,
      description: 'delete spam this many days after it arrives (30 by default); null keeps it',
    }),
  ),
  delete_after_delivery: Type.Boolean({
    description:
      'once every webhook delivery of a received submission has succeeded and its e-mail is sent, delete its ' +
      'payload and files, keeping a tombstone (id, form, received_at, status, purged_at); false by default',
  }),
  rate_limit: RateLimitField,
  autoresponse: Nullable(
    Type.Composite([AutoresponseSettings], {
      additionalProperties: false,
      description:
        'a confirmation mailed to whoever filled the form in (received submissions only, at most one per mailbox ' +
        'and account in 10 minutes: case, `+tags` and Gmail’s dots are one mailbox); null turns it off',
    }),
  ),
  mail_from_name: Nullable(MailFromName),
  notification_template: Nullable(
    Type.Composite([NotificationTemplate], {
      additionalProperties: false,
      description:
        'the owner’s notification: `subject` and `text` with `{{field name}}` placeholders (filled as plain text; ' +
        'the HTML part shows them escaped), `{{form}}` and `{{project}}` (the form’s name and its project’s, ' +
        'empty in the default project) and `{{received_at}}` (when it arrived, in `time_zone`); a field of that ' +
        'name wins. The text is the whole message, with nothing of Intake’s above it; the files’ links follow it, ' +
        'and the console’s link for a recipient who is a member able to open it. A post’s `_subject` still wins. ' +
        'Null: Intake’s own, which names the project beside the form',
    }),
  ),
  pages: Nullable(
    Type.Composite([VisitorPages], {
      additionalProperties: false,
      description:
        'what a browser’s plain form post shows the visitor: `thank_you` and `refused` (a refused post’s page, above ' +
        'the reason), each `{ title?, message? }` in plain text; left out, Intake’s own in the visitor’s language ' +
        '(Accept-Language: en, de, fr, es, it, nl, pt). Not used with a redirect_url, where the site shows its own',
    }),
  ),
  time_zone: Type.String({
    format: 'time-zone',
    maxLength: 64,
    description:
      'the IANA time zone (`Europe/Paris`, `America/New_York`, `UTC`) in which its notification, digest and ' +
      'autoresponse mails give times (`{{received_at}}` in a template); `UTC` by default. A name that is not a zone ' +
      'is 422',
  }),
  notification_schedule: Type.Union([Type.Literal('each'), Type.Literal('daily')], {
    description:
      '`each` (default): a mail to `notify_emails` per received submission; `daily`: one digest a day of what was ' +
      'received (none on a day with nothing), the first a day after the switch',
  }),
};

/**
 * The settings a project sets for its forms (`form_defaults`), each checked as the form's own setting is: any of the
 * inheritable settings; null where the form's setting takes null.
 */
export const FormDefaults = Type.Partial(Type.Pick(Type.Object(fields), [...INHERITABLE_SETTINGS]), {
  additionalProperties: false,
  description:
    'the settings the project’s forms inherit (any of ' +
    INHERITABLE_SETTINGS.map((k) => `\`${k}\``).join(', ') +
    '), each as a form takes it. A form made in the project, moved into it or copied there takes each setting it ' +
    'does not give itself; a change is written into every form of the project (the trash’s too) that does not set ' +
    'that setting itself, at once. A form sets a setting itself once it is given one (on creation or with `PATCH`); ' +
    '`PATCH /v1/forms/:id { inherit }` gives it back. A setting the project stops setting stays on its forms as it ' +
    'is, as their own value. Forms made before project defaults existed set themselves every setting they had ' +
    'changed from its default',
});

const CreateForm = Type.Object(
  {
    ...fields,
    template: Type.Optional(
      Type.Union(
        FORM_TEMPLATE_NAMES.map((k) => Type.Literal(k)),
        {
          description:
            'start from a template: its settings fill in what the body leaves out (the body’s own values win), and ' +
            'are the form’s own, not its project’s. ' +
            templatesDescription(),
        },
      ),
    ),
    project_id: Type.Optional(fields.project_id),
    slug: Type.Optional(fields.slug),
    status: Type.Optional(fields.status),
    honeypot_field: Type.Optional(fields.honeypot_field),
    bot_challenge: Type.Optional(fields.bot_challenge),
    notify_emails: Type.Optional(fields.notify_emails),
    redirect_url: Type.Optional(fields.redirect_url),
    allowed_origins: Type.Optional(fields.allowed_origins),
    spam_filter: Type.Optional(fields.spam_filter),
    spam_rules: Type.Optional(fields.spam_rules),
    spam_model: Type.Optional(fields.spam_model),
    autoresponse: Type.Optional(fields.autoresponse),
    retention_days: Type.Optional(fields.retention_days),
    spam_retention_days: Type.Optional(fields.spam_retention_days),
    delete_after_delivery: Type.Optional(fields.delete_after_delivery),
    rate_limit: Type.Optional(fields.rate_limit),
    mail_from_name: Type.Optional(fields.mail_from_name),
    notification_template: Type.Optional(fields.notification_template),
    notification_schedule: Type.Optional(fields.notification_schedule),
    pages: Type.Optional(fields.pages),
    time_zone: Type.Optional(fields.time_zone),
  },
  { additionalProperties: false },
);
const UpdateForm = Type.Partial(
  Type.Object({
    ...fields,
    inherit: Type.Array(Inheritable, {
      uniqueItems: true,
      maxItems: INHERITABLE_SETTINGS.length,
      description:
        'settings to take from the form’s project again (its project after a move in the same change), each set to ' +
        'the project’s value and following it from then on; 422 for one the project does not set, or one given a ' +
        'value in the same body. Each inheritable setting given a value becomes the form’s own',
    }),
  }),
  { additionalProperties: false },
);
const Duplicate = Type.Object(
  {
    name: Type.Optional(fields.name),
    project_id: Type.Optional(
      Type.String({ pattern: idPattern('project'), description: 'the copy’s project; the original’s when left out' }),
    ),
  },
  { additionalProperties: false },
);

export function presentForm(
  row: FormRow,
  place: { project: FormProject; inherited: InheritableSetting[] },
  baseUrl: string,
  trashDays: number,
) {
  const { project, inherited } = place;
  return {
    id: row.id,
    project_id: row.project_id,
    project,
    name: row.name,
    slug: row.slug,
    status: row.status,
    honeypot_field: row.honeypot_field,
    bot_challenge: row.bot_challenge_provider ? { provider: row.bot_challenge_provider } : null,
    notify_emails: row.notify_emails,
    redirect_url: row.redirect_url,
    allowed_origins: row.allowed_origins,
    spam_filter: row.spam_filter,
    spam_rules: row.spam_rules,
    spam_model: row.spam_model,
    autoresponse: row.autoresponse ?? null,
    retention_days: row.retention_days,
    spam_retention_days: row.spam_retention_days,
    delete_after_delivery: row.delete_after_delivery,
    rate_limit: row.rate_limit,
    mail_from_name: row.mail_from_name,
    notification_template: row.notification_template ?? null,
    notification_schedule: row.notification_schedule,
    pages: row.pages ?? null,
    time_zone: row.time_zone,
    inherited,
    ingest_url: `${baseUrl}/v1/f/${row.slug}`,
    created_at: toTimestamp(row.created_at),
    updated_at: toTimestamp(row.updated_at),
    deleted_at: row.deleted_at ? toTimestamp(row.deleted_at) : null,
    purge_at: row.deleted_at ? toTimestamp(new Date(row.deleted_at.getTime() + trashDays * 86_400_000)) : null,
  };
}

const TAGS = ['Forms'];
/** The forms as the API shows them, each with the project it is named with (one query for all of them). */
async function present({ db, config }: Pick<Platform, 'db' | 'config'>, accountId: string, rows: FormRow[]) {
  const placeOf = await placesOfForms(db, accountId, rows);
  return rows.map((row) => presentForm(row, placeOf(row), config.PUBLIC_BASE_URL, config.TRASH_DAYS));
}
const presentOne = async (platform: Pick<Platform, 'db' | 'config'>, accountId: string, row: FormRow) =>
  (await present(platform, accountId, [row]))[0];

/** Answers 201 with a form just made, and where it lives. */
async function answerCreated(ctx: Context, platform: Platform, accountId: string, form: FormRow) {
  ctx.status = 201;
  ctx.set('Location', `/v1/forms/${form.id}`);
  ctx.body = await presentOne(platform, accountId, form);
}

/** `POST /v1/forms`. */
export const createFormRoute = route({
  method: 'POST',
  path: '/v1/forms',
  operationId: 'createForm',
  summary: 'Create a form',
  tags: TAGS,
  auth: 'management',
  body: CreateForm,
  responses: { 201: { description: 'Created', schema: Form } },
  problems: ['conflict'],
  async handler(ctx, { body, principal }, platform: Platform) {
    const form = await createForm({
      ...changeBy(ctx, principal, platform),
      projects: principal.projectIds,
      input: body,
    });
    await answerCreated(ctx, platform, principal.accountId, form);
  },
});

/** `GET /v1/forms`: a page of the account's forms. */
export const listFormsRoute = route({
  method: 'GET',
  path: '/v1/forms',
  operationId: 'listForms',
  summary: 'List the account’s forms, newest first, a page at a time',
  tags: TAGS,
  auth: 'management',
  query: Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
    cursor: Type.Optional(Type.String({ maxLength: 500, description: '`next_cursor` of the previous page' })),
    deleted: Type.Optional(
      Type.Boolean({
        description: '`true`: the forms in the trash instead (each with `deleted_at`), until TRASH_DAYS remove them',
      }),
    ),
    project_id: Type.Optional(Type.String({ pattern: idPattern('project'), description: 'only this project’s forms' })),
  }),
  responses: { 200: { description: 'One page; `next_cursor` is null on the last', schema: Page(Form) } },
  async handler(ctx, { query, principal }, platform: Platform) {
    const { db } = platform;
    const { rows, nextCursor } = await listForms({
      db,
      accountId: principal.accountId,
      limit: query.limit,
      cursor: query.cursor,
      trashed: query.deleted === true,
      // The guard let a limited principal name only its own projects.
      projects: projectsAskedFor(principal, query.project_id),
    });
    ctx.body = { data: await present(platform, principal.accountId, rows), next_cursor: nextCursor };
  },
});

/** `GET /v1/forms/:id`. */
export const getFormRoute = route({
  method: 'GET',
  path: '/v1/forms/:id',
  operationId: 'getForm',
  summary: 'Get a form',
  tags: TAGS,
  auth: 'management',
  params: IdParams('form', 'form id'),
  responses: { 200: { description: 'The form', schema: Form } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, platform: Platform) {
    const form = await getForm({ db: platform.db, accountId: principal.accountId, id: params.id });
    ctx.body = await presentOne(platform, principal.accountId, form);
  },
});

/** `PATCH /v1/forms/:id`. */
export const updateFormRoute = route({
  method: 'PATCH',
  path: '/v1/forms/:id',
  operationId: 'updateForm',
  summary:
    'Change a form: any of the creation fields (`bot_challenge: null` turns the check off), or take settings from its ' +
    'project again (`inherit`)',
  tags: TAGS,
  auth: 'management',
  params: IdParams('form', 'form id'),
  body: UpdateForm,
  responses: { 200: { description: 'The updated form', schema: Form } },
  problems: ['not-found', 'conflict'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const form = await updateForm({
      ...changeBy(ctx, principal, platform),
      id: params.id,
      input: body,
    });
    ctx.body = await presentOne(platform, principal.accountId, form);
  },
});

/** `POST /v1/forms/:id/duplicate`: a new form with the same settings. */
export const duplicateFormRoute = route({
  method: 'POST',
  path: '/v1/forms/:id/duplicate',
  operationId: 'duplicateForm',
  summary: 'Copy a form: a new form with the same settings',
  description:
    'The copy has every setting of the original (its status, bot challenge and autoresponse included) and sets itself ' +
    'the same settings the original sets itself; in another project (`project_id`) it inherits that project’s ' +
    'defaults for the rest. Its name is “<name> (copy)” unless given, its slug made from its name. Webhooks, ' +
    'integrations, saved views and submissions are not copied: a copy never sends to the original’s endpoints.',
  tags: TAGS,
  auth: 'management',
  params: IdParams('form', 'form id'),
  body: Duplicate,
  responses: { 201: { description: 'The copy', schema: Form } },
  problems: ['not-found'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const form = await duplicateForm({
      ...changeBy(ctx, principal, platform),
      id: params.id,
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.project_id !== undefined ? { projectId: body.project_id } : {}),
    });
    await answerCreated(ctx, platform, principal.accountId, form);
  },
});

/** `DELETE /v1/forms/:id`: the form with its submissions, files and webhooks. */
export const deleteFormRoute = deleteRoute({
  collection: '/v1/forms',
  operationId: 'deleteForm',
  summary: 'Move a form with its submissions to the trash (or, `permanently=true`, delete it for good now)',
  description:
    'In the trash a form accepts no post (404 `form-not-found`, as if it did not exist), is left out of every list ' +
    'and read, and keeps its slug, submissions, files and webhooks for TRASH_DAYS (30), when the purge deletes it ' +
    'for good; `POST /v1/forms/:id/restore` brings it back as it was. Deliveries already under way finish. ' +
    '`permanently=true` deletes the form (in the trash or not) with its submissions, stored files and webhooks now.',
  tags: TAGS,
  kind: 'form',
  remove: deleteForm,
  forGood: deleteFormForGood,
});

/** `POST /v1/forms/:id/restore`: a form out of the trash. */
export const restoreFormRoute = route({
  method: 'POST',
  path: '/v1/forms/:id/restore',
  operationId: 'restoreForm',
  summary: 'Bring a form back from the trash with its submissions, as it was',
  tags: TAGS,
  auth: 'management',
  params: IdParams('form', 'form id'),
  responses: { 200: { description: 'The form, live again as it was', schema: Form } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, platform: Platform) {
    const form = await restoreForm({
      ...changeBy(ctx, principal, platform),
      id: params.id,
      trashDays: platform.config.TRASH_DAYS,
    });
    ctx.body = await presentOne(platform, principal.accountId, form);
  },
});

/** The form routes, in the order the OpenAPI document lists them. */
export const formRoutes = [
  createFormRoute,
  listFormsRoute,
  getFormRoute,
  updateFormRoute,
  duplicateFormRoute,
  deleteFormRoute,
  restoreFormRoute,
  getRateLimitRoute,
];
