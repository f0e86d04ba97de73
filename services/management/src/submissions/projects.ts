import { isUniqueViolation, type Db, type Queryable } from '@intake/shared/base';
import { newId, problem, type FormProject } from '@intake/shared/contracts';
import { type Principal, type Role } from '@intake/shared/auth';
import { announceFormChange } from '@intake/shared/messaging';
import { type Platform } from '@intake/shared/runtime';
import type { Knex } from 'knex';
import {
  countFormsOfProject,
  deleteProjectRow,
  existingProjectIds,
  findFormDefaults,
  findFormProjects,
  findProject,
  findProjects,
  insertProject,
  renameProject,
  setFormDefaults,
  type ProjectRow,
} from './project.repository';
import { formsOfProject, writeProjectDefaults, type FormWrite } from './form.repository';
import { copyForm } from './form-insert';
import {
  changedDefaults,
  inheritedOf,
  pickDefaults,
  type FormDefaults,
  type InheritableSetting,
} from './form-defaults';
import type { Audit } from '../platform/audit-trail';

type Deps = Pick<Platform, 'db' | 'clock' | 'nats' | 'logger'> & { audit: Audit };

const nameTaken = (name: string) =>
  problem('conflict', `A project named "${name}" already exists`, {
    errors: [{ field: 'body/name', message: 'is already taken' }],
  });

/** The projects a principal sees: the account's, or those it is limited to. */
export function listProjects(db: Db, principal: Principal): Promise<ProjectRow[]> {
  return findProjects(db, principal.accountId, principal.projectIds);
}

/**
 * The project each of these forms is named with (`formProject`: null in the account's default project), read in one
 * query for all of them.
 */
export async function projectsOfForms(
  db: Queryable,
  accountId: string,
  forms: readonly { project_id: string | null }[],
): Promise<(form: { project_id: string | null }) => FormProject> {
  const placed = await placesOfForms(db, accountId, forms);
  return (form) => placed({ ...form, overridden: [] }).project;
}

/**
 * Each of these forms' project as it is named with it (as `projectsOfForms`), and the settings the form inherits from
 * it (`inherited`: those the project sets and the form does not override), read in one query for all of them.
 */
export async function placesOfForms(
  db: Queryable,
  accountId: string,
  forms: readonly { project_id: string | null }[],
): Promise<(form: { project_id: string | null; overridden: string[] }) => Place> {
  const ids = forms.flatMap((f) => (f.project_id ? [f.project_id] : []));
  const found = await findFormProjects(db, accountId, ids);
  return (form) => {
    const place = form.project_id ? found.get(form.project_id) : undefined;
    return { project: place?.project ?? null, inherited: inheritedOf(place?.sets ?? [], form.overridden) };
  };
}
type Place = { project: FormProject; inherited: InheritableSetting[] };

export async function getProject(db: Db, accountId: string, id: string): Promise<ProjectRow> {
  const project = await findProject(db, accountId, id);
  if (!project) throw problem('not-found', `No project ${id}`);
  return project;
}

/**
 * Writes a change that names project `id` (`change`, in one transaction, its audit entry with it), a name another
 * project of the account has answering 409 at the field; then the project as it now is.
 */
async function saveNamed(
  props: Deps & { accountId: string; id: string; name: string },
  change: (trx: Knex.Transaction) => Promise<void>,
): Promise<ProjectRow> {
  try {
    await props.db.transaction(change);
  } catch (err) {
    throw isUniqueViolation(err) ? nameTaken(props.name) : err;
  }
  return getProject(props.db, props.accountId, props.id);
}

/**
 * Creates a project; `formsFrom` (another of the account's projects, else 404) gives it that project's form defaults
 * and a copy of each of its forms out of the trash (as `duplicateForm` copies one, under the same name), in the same
 * transaction.
 */
export async function createProject(
  props: Deps & { accountId: string; name: string; formsFrom?: string },
): Promise<ProjectRow> {
  const { accountId, name, formsFrom } = props;
  const now = props.clock.now();
  const id = newId('project', now.getTime());
  return saveNamed({ ...props, id }, async (trx) => {
    const defaults = formsFrom ? await findFormDefaults(trx, accountId, formsFrom, 'share') : {};
    if (!defaults)
      throw problem('not-found', `No project ${formsFrom}`, {
        errors: [{ field: 'body/forms_from', message: 'is not a project of this account' }],
      });
    await insertProject(trx, { id, account_id: accountId, name, form_defaults: defaults, created_at: now });
    const forms = formsFrom ? await formsOfProject(trx, accountId, formsFrom) : [];
    await props.audit.record(trx, {
      action: 'project.created',
      target: { type: 'project', id },
      details: { name, ...(formsFrom ? { forms_from: formsFrom, forms: forms.length } : {}) },
    });
    for (const source of forms)
      await copyForm(trx, { audit: props.audit, now, source, name: source.name, projectId: id });
  });
}

/**
 * Renames the project and (`formDefaults`, replacing the whole object) sets the settings its forms inherit: each
 * setting whose value changed is written, in the same transaction, into every form of the project (the trash's too)
 * that does not override it, and each form written is announced as changed after the commit (ingest drops its copy).
 */
export async function updateProject(
  props: Deps & { accountId: string; id: string; name?: string; formDefaults?: FormDefaults },
): Promise<ProjectRow> {
  const { accountId, id, name, formDefaults } = props;
  const written: { id: string; slug: string }[] = [];
  const project = await saveNamed({ ...props, name: name ?? '' }, async (trx) => {
    const before = await findFormDefaults(trx, accountId, id, 'update');
    if (!before) throw problem('not-found', `No project ${id}`);
    const now = props.clock.now();
    if (name !== undefined) await renameProject(trx, accountId, id, name, now);
    if (formDefaults === undefined) {
      await props.audit.record(trx, { action: 'project.updated', target: { type: 'project', id }, details: { name } });
      return;
    }
    await setFormDefaults(trx, accountId, id, formDefaults, now);
    const settings = changedDefaults(before, formDefaults);
    written.push(
      ...(await writeProjectDefaults(trx, accountId, id, pickDefaults(formDefaults, settings) as FormWrite, now)),
    );
    await props.audit.record(trx, {
      action: 'project.updated',
      target: { type: 'project', id },
      details: {
        ...(name !== undefined ? { name } : {}),
        changed: [...(name !== undefined ? ['name'] : []), 'form_defaults'],
        settings,
        forms: written.length,
      },
    });
  });
  for (const form of written)
    announceFormChange({ nats: props.nats, logger: props.logger, change: { form_id: form.id, slug: form.slug } });
  return project;
}

/** Deletes an empty project (409 while it holds forms, the trash's included, and for the account's default). */
export async function deleteProject(props: Deps & { accountId: string; id: string }): Promise<void> {
  const { db, accountId, id } = props;
  await db.transaction(async (trx) => {
    const project = await findProject(trx, accountId, id);
    if (!project) throw problem('not-found', `No project ${id}`);
    if (project.is_default)
      throw problem('conflict', 'The default project cannot be deleted: forms created without a project go there');
    const forms = await countFormsOfProject(trx, id);
    if (forms > 0)
      throw problem(
        'conflict',
        `The project holds ${forms} form${forms === 1 ? '' : 's'} (the trash’s included): move or delete them first`,
      );
    await deleteProjectRow(trx, accountId, id);
    await props.audit.record(trx, {
      action: 'project.deleted',
      target: { type: 'project', id },
      details: { name: project.name },
    });
  });
}

/** 404 unless every id names a project of the account (a member's or key's list, a form's new project). */
export async function requireProjects(db: Db, accountId: string, ids: string[], field: string): Promise<void> {
  const found = new Set(await existingProjectIds(db, accountId, ids));
  const missing = ids.find((id) => !found.has(id));
  if (missing)
    throw problem('not-found', `No project ${missing}`, {
      errors: [{ field, message: 'is not a project of this account' }],
    });
}

/**
 * The list a member or key with `role` is limited to: null (the whole account) when none is given; 422 for an admin
 * or owner, who always have the whole account; 404 when one is not a project of the account.
 */
export async function projectLimit(
  db: Db,
  accountId: string,
  role: Role | null,
  projectIds: string[] | null | undefined,
): Promise<string[] | null> {
  if (!projectIds) return null;
  if (role !== 'viewer' && role !== 'editor')
    throw problem('validation-failed', 'body/project_ids is only for viewers and editors', {
      errors: [
        {
          field: 'body/project_ids',
          message: 'is only for viewers and editors: admins and owners see the whole account',
        },
      ],
    });
  await requireProjects(db, accountId, projectIds, 'body/project_ids');
  return projectIds;
}
