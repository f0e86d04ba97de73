import {
  isUniqueViolation,
  newId,
  problem,
  type Db,
  type FormProject,
  type Platform,
  type Principal,
  type Queryable,
  type Role,
} from '@intake/shared';
import type { Knex } from 'knex';
import {
  countFormsOfProject,
  deleteProjectRow,
  existingProjectIds,
  findFormProjects,
  findProject,
  findProjects,
  insertProject,
  renameProject,
  type ProjectRow,
} from './project.repository';
import type { Audit } from '../platform/audit-trail';

type Deps = Pick<Platform, 'db' | 'clock'> & { audit: Audit };

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
  const ids = forms.flatMap((f) => (f.project_id ? [f.project_id] : []));
  const found = await findFormProjects(db, accountId, ids);
  return (form) => (form.project_id ? (found.get(form.project_id) ?? null) : null);
}

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

export async function createProject(props: Deps & { accountId: string; name: string }): Promise<ProjectRow> {
  const { accountId, name } = props;
  const id = newId('project', props.clock.now().getTime());
  return saveNamed({ ...props, id }, async (trx) => {
    await insertProject(trx, { id, account_id: accountId, name, created_at: props.clock.now() });
    await props.audit.record(trx, { action: 'project.created', target: { type: 'project', id }, details: { name } });
  });
}

export async function updateProject(props: Deps & { accountId: string; id: string; name: string }) {
  const { accountId, id, name } = props;
  return saveNamed(props, async (trx) => {
    if (!(await renameProject(trx, accountId, id, name, props.clock.now())))
      throw problem('not-found', `No project ${id}`);
    await props.audit.record(trx, { action: 'project.updated', target: { type: 'project', id }, details: { name } });
  });
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
