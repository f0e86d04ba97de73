import { randomBytes } from 'node:crypto';
import {
  announceFormChange,
  isUniqueViolation,
  newId,
  problem,
  type Db,
  type Platform,
  type NotificationSchedule,
  type NotificationTemplate,
  type SpamFilter,
  type SpamModelScope,
  type SpamRules,
  type VisitorPages,
} from '@intake/shared';
import {
  deleteFormRow,
  findFileKeysOfForm,
  lockForm,
  restoreFormRow,
  setFormTrashed,
  findForm,
  insertForm,
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
import { defaultProjectId } from './project.repository';
import { moveFormUsage } from './dashboard.repository';
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
  mail_from_name?: string | null;
  notification_template?: NotificationTemplate | null;
  notification_schedule?: NotificationSchedule;
  pages?: VisitorPages | null;
  project_id?: string;
  spam_model?: SpamModelScope;
}

type Deps = Pick<Platform, 'db' | 'secrets' | 'clock' | 'blobs' | 'logger' | 'nats'>;
/** What a change of a form needs: the platform's parts, and the audit log's writer for whoever makes it. */
type ChangeDeps = Deps & { audit: Audit };

/**
 * A URL-safe slug from a name: lower-case ASCII letters, digits and single hyphens. The first try is the name's slug
 * alone; only when that is taken (`attempt` 1 on) does it get a random suffix.
 */
export function generateSlug(name: string, attempt = 0): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  if (attempt === 0) return base || 'form';
  const suffix = randomBytes(5).toString('hex').slice(0, 6);
  return `${base || 'form'}-${suffix}`;
}

function toColumns(input: FormInput, secrets: Deps['secrets']): FormWrite {
  const { bot_challenge, ...rest } = input;
  const out: FormWrite = { ...rest };
  if (bot_challenge !== undefined) {
    out.bot_challenge_provider = bot_challenge?.provider ?? null;
    out.bot_challenge_secret = bot_challenge ? secrets.seal(bot_challenge.secret) : null;
  }
  return out;
}

function slugTaken(slug: string) {
  return problem('conflict', `The slug "${slug}" is already taken`, {
    errors: [{ field: 'body/slug', message: 'is already taken' }],
  });
}

/**
 * Creates a form in the project it names (404 when the account has none such), else in the account's default project
 * or, for a principal limited to projects without it, their first. A given slug that is taken answers 409; a
 * generated one is retried.
 */
export async function createForm(
  props: ChangeDeps & { accountId: string; projects: string[] | null; input: FormInput & { name: string } },
): Promise<FormRow> {
  const { db, secrets, clock, accountId } = props;
  const now = clock.now();
  if (props.input.project_id) await requireProjects(db, accountId, [props.input.project_id], 'body/project_id');
  // Left out, the database puts it in the account's default project; a principal limited to projects gets its own.
  const project = props.input.project_id ?? (props.projects && (await defaultProjectId(db, accountId, props.projects)));
  if (project === undefined) throw problem('not-found', 'You can see no project to create the form in');
  const input = { ...props.input, ...(project ? { project_id: project } : {}) };
  for (let attempt = 0; ; attempt++) {
    const slug = input.slug ?? generateSlug(input.name, attempt);
    try {
      // A transaction per try: a slug taken ends it, and the next try starts afresh.
      return await db.transaction(async (trx) => {
        const form = await insertForm(trx, {
          ...toColumns(input, secrets),
          id: newId('form', now.getTime()),
          account_id: accountId,
          name: input.name,
          slug,
          created_at: now,
          updated_at: now,
        });
        await props.audit.record(trx, {
          action: 'form.created',
          target: { type: 'form', id: form.id },
          details: { slug: form.slug },
        });
        return form;
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (input.slug !== undefined || attempt >= 4) throw slugTaken(slug);
    }
  }
}

export async function getForm(props: Pick<Deps, 'db'> & { accountId: string; id: string }): Promise<FormRow> {
  const form = await findForm(props.db, props.accountId, props.id);
  if (!form) throw problem('not-found', `No form ${props.id}`);
  return form;
}

/** Applies the given fields; status may move between live, paused and draft in any direction. */
export async function updateForm(
  props: ChangeDeps & { accountId: string; id: string; input: FormInput },
): Promise<FormRow> {
  const { db, secrets, clock, accountId, id, input } = props;
  if (input.project_id) await requireProjects(db, accountId, [input.project_id], 'body/project_id');
  if (Object.keys(input).length === 0) return getForm(props); // nothing changed, nothing to record
  try {
    const row = await db.transaction(async (trx) => {
      const before = input.project_id ? await findForm(trx, accountId, id, { lock: true }) : undefined;
      const updated = await updateFormRow(trx, accountId, id, {
        ...toColumns(input, secrets),
        updated_at: clock.now(),
      });
      if (!updated) throw problem('not-found', `No form ${id}`);
      if (before && before.project_id !== updated.project_id)
        await moveFormUsage(trx, { accountId, formId: id, from: before.project_id, to: updated.project_id });
      await props.audit.record(trx, {
        action: 'form.updated',
        target: { type: 'form', id },
        details: changedFields(input),
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
