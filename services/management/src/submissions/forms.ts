import type { Knex } from 'knex';
import { isUniqueViolation, type Db } from '@intake/shared/base';
import {
  problem,
  type NotificationSchedule,
  type NotificationTemplate,
  type SpamFilter,
  type SpamModelScope,
  type SpamRules,
  type VisitorPages,
} from '@intake/shared/contracts';
import { announceFormChange } from '@intake/shared/messaging';
import { type Platform } from '@intake/shared/runtime';
import {
  deleteFormRow,
  findFileKeysOfForm,
  lockForm,
  restoreFormRow,
  setFormTrashed,
  findForm,
  pageOfForms,
  updateFormRow,
  type ChallengeProvider,
  type FormRow,
  type FormStatus,
  type FormWrite,
} from './form.repository';
import { trashedBefore } from '../lifecycle/purge';
import { changedFields, type Audit } from '../platform/audit-trail';
import { requireProjects } from './projects';
import { defaultProjectId, findFormDefaults } from './project.repository';
import { copyForm, insertNewForm, slugTaken } from './form-insert';
import {
  checkInherit,
  INHERITABLE_SETTINGS,
  inheritableOf,
  overriddenAfter,
  pickDefaults,
  type InheritableSetting,
} from './form-defaults';
import { FORM_TEMPLATES, type FormTemplate } from './form-templates';
import { moveFormUsage } from './dashboard.repository';
import { checkRateLimit } from './rate-limit';
import { decodeCursor, encodeCursor } from '../platform/cursor';
import type { AutoresponseSettings } from './autoresponse.repository';

export interface FormInput {
  name?: string;
  slug?: string;
  status?: FormStatus;
  honeypot_field?: string;
  bot_challenge?: { provider: ChallengeProvider; secret: string } | null;
  notify_emails?: string[];
  redirect_url?: string | null;
  allowed_origins?: string[];
  spam_filter?: SpamFilter;
  spam_rules?: SpamRules;
  autoresponse?: AutoresponseSettings | null;
  retention_days?: number | null;
  spam_retention_days?: number | null;
  delete_after_delivery?: boolean;
  rate_limit?: number | null;
  mail_from_name?: string | null;
  notification_template?: NotificationTemplate | null;
  notification_schedule?: NotificationSchedule;
  pages?: VisitorPages | null;
  time_zone?: string;
  project_id?: string;
  spam_model?: SpamModelScope;
}

type Deps = Pick<Platform, 'db' | 'secrets' | 'clock' | 'blobs' | 'logger' | 'nats'>;
/** What a change of a form needs: the platform's parts, and the audit log's writer for whoever makes it. */
type ChangeDeps = Deps & { audit: Audit };

function toColumns(input: FormInput, secrets: Deps['secrets']): FormWrite {
  const { bot_challenge, ...rest } = input;
  const out: FormWrite = { ...rest };
  if (bot_challenge !== undefined) {
    out.bot_challenge_provider = bot_challenge?.provider ?? null;
    out.bot_challenge_secret = bot_challenge ? secrets.seal(bot_challenge.secret) : null;
  }
  return out;
}

/** Where a new form goes that names no project: the account's default, or a limited principal's first project. */
async function projectOfNewForm(db: Db, accountId: string, given: string | undefined, projects: string[] | null) {
  if (given) {
    await requireProjects(db, accountId, [given], 'body/project_id');
    return given;
  }
  const project = await defaultProjectId(db, accountId, projects);
  if (project === undefined) throw problem('not-found', 'You can see no project to create the form in');
  return project;
}

/**
 * Creates a form in the project it names (404 when the account has none such), else in the account's default project
 * or, for a principal limited to projects without it, their first. Its `template`'s settings fill in what the body
 * leaves out; every inheritable setting either gives is the form's own, and its project's defaults fill in the rest.
 * A given slug that is taken answers 409; a generated one is retried.
 */
export async function createForm(
  props: ChangeDeps & {
    accountId: string;
    projects: string[] | null;
    input: FormInput & { name: string; template?: FormTemplate };
  },
): Promise<FormRow> {
  const { db, accountId } = props;
  const { template, project_id, slug, name, ...body } = props.input;
  const input = { ...(template ? FORM_TEMPLATES[template].settings : {}), ...body };
  await checkRateLimit(db, accountId, input.rate_limit);
  return insertNewForm(db, {
    audit: props.audit,
    now: props.clock.now(),
    accountId,
    projectId: await projectOfNewForm(db, accountId, project_id, props.projects),
    name,
    ...(slug !== undefined ? { slug } : {}),
    values: toColumns(input, props.secrets),
    overridden: inheritableOf(Object.keys(input)),
    ...(template ? { details: { template } } : {}),
  });
}

/**
 * A copy of the form with its settings (and which of them are its own), named `name` (“<name> (copy)” when left out),
 * in `projectId` (the form's own when left out), where it inherits the rest; its status as the original's. Webhooks,
 * integrations, saved views and submissions stay with the original.
 */
export async function duplicateForm(
  props: ChangeDeps & { accountId: string; id: string; name?: string; projectId?: string },
): Promise<FormRow> {
  const { db, accountId } = props;
  if (props.projectId) await requireProjects(db, accountId, [props.projectId], 'body/project_id');
  const source = await getForm(props);
  return copyForm(db, {
    audit: props.audit,
    now: props.clock.now(),
    source,
    name: props.name ?? `${source.name.slice(0, 193)} (copy)`,
    projectId: props.projectId ?? source.project_id,
  });
}

export async function getForm(props: Pick<Deps, 'db'> & { accountId: string; id: string }): Promise<FormRow> {
  const form = await findForm(props.db, props.accountId, props.id);
  if (!form) throw problem('not-found', `No form ${props.id}`);
  return form;
}

/**
 * The values a change writes besides what it gives: its project's for each setting put back under it (`inherit`),
 * and, when the form moves, the new project's for every setting the form does not override. The project's row is held
 * for a move, as for a new form; a setting inherited back is written again by a change of the project's defaults that
 * commits after it.
 */
async function fromProject(
  trx: Knex.Transaction,
  props: { accountId: string; form: FormRow; input: FormInput; inherit: string[]; overridden: string[] },
): Promise<FormWrite> {
  const { accountId, form, input, inherit } = props;
  const projectId = input.project_id ?? form.project_id;
  const moved = projectId !== form.project_id;
  if (!moved && inherit.length === 0) return {};
  const defaults = (await findFormDefaults(trx, accountId, projectId, moved ? 'share' : undefined)) ?? {};
  checkInherit(inherit, input, defaults);
  const keys = moved ? INHERITABLE_SETTINGS.filter((k) => !props.overridden.includes(k)) : inheritableOf(inherit);
  return pickDefaults(defaults, keys) as FormWrite;
}

/**
 * Applies the given fields; status may move between live, paused and draft in any direction. Each inheritable setting
 * given becomes the form's own; `inherit` puts settings back under its project (422 for one the project does not set,
 * or one also given a value).
 */
export async function updateForm(
  props: ChangeDeps & { accountId: string; id: string; input: FormInput & { inherit?: InheritableSetting[] } },
): Promise<FormRow> {
  const { db, secrets, clock, accountId, id } = props;
  const { inherit = [], ...input } = props.input;
  if (input.project_id) await requireProjects(db, accountId, [input.project_id], 'body/project_id');
  if (Object.keys(props.input).length === 0) return getForm(props); // nothing changed, nothing to record
  await checkRateLimit(db, accountId, input.rate_limit);
  try {
    const row = await db.transaction(async (trx) => {
      const before = await findForm(trx, accountId, id, { lock: true });
      if (!before) throw problem('not-found', `No form ${id}`);
      const overridden = overriddenAfter(before.overridden, Object.keys(input), inherit);
      const inherited = await fromProject(trx, { accountId, form: before, input, inherit, overridden });
      const updated = await updateFormRow(trx, accountId, id, {
        ...inherited,
        ...toColumns(input, secrets),
        overridden,
        updated_at: clock.now(),
      });
      if (!updated) throw problem('not-found', `No form ${id}`);
      if (before.project_id !== updated.project_id)
        await moveFormUsage(trx, { accountId, formId: id, from: before.project_id, to: updated.project_id });
      await props.audit.record(trx, {
        action: 'form.updated',
        target: { type: 'form', id },
        details: inherit.length
          ? { ...changedFields({ ...input, ...inherited }), inherited: inherit }
          : changedFields(input),
      });
      return updated;
    });
    // After the commit: every ingest process drops its cached copy (old slug included) now, and the account's spam
    // models when the form changed whose model it uses.
    const models = input.project_id !== undefined || input.spam_model !== undefined ? { account_id: accountId } : {};
    announceFormChange({
      nats: props.nats,
      logger: props.logger,
      change: { form_id: row.id, slug: row.slug, ...models },
    });
    return row;
  } catch (err) {
    if (isUniqueViolation(err) && input.slug) throw slugTaken(input.slug);
    throw err;
  }
}

/**
 * Moves the form to the trash with its submissions (TRASH_DAYS, then the purge deletes it for good): it accepts no
 * post and is no part of any read but the trash's from now on; `restoreForm` brings it back as it was.
 */
export async function deleteForm(props: ChangeDeps & { accountId: string; id: string }): Promise<void> {
  const { db, logger, accountId, id } = props;
  await db.transaction(async (trx) => {
    if (!(await setFormTrashed(trx, accountId, id, props.clock.now()))) throw problem('not-found', `No form ${id}`);
    await props.audit.record(trx, { action: 'form.deleted', target: { type: 'form', id }, details: { trash: true } });
  });
  // After the commit: every ingest process drops its cached copy now, and refuses the form's posts.
  announceFormChange({ nats: props.nats, logger, change: { form_id: id } });
}

/**
 * Takes a form out of the trash with its submissions, as they were (404 when it is not there, or has been there longer
 * than `trashDays`: it is deleted for good, whether or not the purge has reached it yet).
 */
export async function restoreForm(
  props: ChangeDeps & { accountId: string; id: string; trashDays: number },
): Promise<FormRow> {
  const { db, accountId, id } = props;
  const trashedSince = trashedBefore(props.clock.now(), props.trashDays);
  await db.transaction(async (trx) => {
    if (!(await restoreFormRow(trx, accountId, id, trashedSince)))
      throw problem('not-found', `No form ${id} in the trash`);
    await props.audit.record(trx, { action: 'form.restored', target: { type: 'form', id } });
  });
  announceFormChange({ nats: props.nats, logger: props.logger, change: { form_id: id } });
  return getForm(props);
}

/**
 * Deletes a form in the trash for good, now: its submissions, then their stored files (keys collected before the rows
 * go). A form not in the trash is moved there first (404 when the account has no such form).
 */
export async function deleteFormForGood(props: ChangeDeps & { accountId: string; id: string }): Promise<void> {
  const { db, blobs, logger, accountId, id } = props;
  const keys = await db.transaction(async (trx) => {
    if (!(await lockForm(trx, accountId, id))) throw problem('not-found', `No form ${id}`);
    const fileKeys = await findFileKeysOfForm(trx, accountId, id);
    await props.audit.record(trx, {
      action: 'form.deleted',
      target: { type: 'form', id },
      details: { for_good: true },
    });
    await deleteFormRow(trx, accountId, id);
    return fileKeys;
  });
  announceFormChange({ nats: props.nats, logger, change: { form_id: id } });
  await removeBlobs({ blobs, logger, keys });
}

/** Removes stored files after their rows are gone; a storage failure is logged (the rows are already deleted). */
export async function removeBlobs(props: Pick<Deps, 'blobs' | 'logger'> & { keys: string[] }): Promise<void> {
  if (props.keys.length === 0) return;
  try {
    await props.blobs.delete(props.keys);
  } catch (err) {
    props.logger.warn({ err, count: props.keys.length }, 'could not delete stored files; they are orphaned');
  }
}

/** One page of the account's forms, newest first; `next_cursor` continues after the last one. */
export async function listForms(props: {
  db: Db;
  accountId: string;
  limit: number;
  cursor?: string;
  trashed?: boolean;
  /** The projects whose forms are listed (null: all). */
  projects: string[] | null;
}): Promise<{ rows: FormRow[]; nextCursor: string | null }> {
  const after = props.cursor ? decodeCursor(props.cursor, 'form') : undefined;
  const rows = await pageOfForms(props.db, props.accountId, {
    after,
    limit: props.limit + 1,
    trashed: props.trashed,
    projects: props.projects,
  });
  const page = rows.slice(0, props.limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > props.limit && last ? encodeCursor(last.created_at, last.id) : null };
}
