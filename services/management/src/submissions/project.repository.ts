import { type Queryable } from '@intake/shared/base';
import { formProject, type FormProject } from '@intake/shared/contracts';
import type { FormDefaults } from './form-defaults';

export interface ProjectRow {
  id: string;
  account_id: string;
  name: string;
  is_default: boolean;
  /** The settings its forms inherit unless they override them (form-defaults.ts). */
  form_defaults: FormDefaults;
  created_at: Date;
  updated_at: Date;
  /** Its forms out of the trash. */
  form_count: number;
}

/** The account's projects (those in `scope` when it is given), the default first, then by name. */
export async function findProjects(
  db: Queryable,
  accountId: string,
  scope: string[] | null,
  ids?: string[],
): Promise<ProjectRow[]> {
  const query = db('projects as p')
    .leftJoin(
      db('forms')
        .where({ account_id: accountId })
        .whereNull('deleted_at')
        .groupBy('project_id')
        .select('project_id', db.raw('count(*)::int as form_count'))
        .as('c'),
      'c.project_id',
      'p.id',
    )
    .where('p.account_id', accountId)
    .select(
      'p.id',
      'p.account_id',
      'p.name',
      'p.is_default',
      'p.form_defaults',
      'p.created_at',
      'p.updated_at',
      // Counted over the forms' account index: an account has hundreds of forms, not millions.
      db.raw('coalesce(c.form_count, 0) as form_count'),
    )
    .orderBy([{ column: 'p.is_default', order: 'desc' }, { column: db.raw('lower(p.name)') as never }, 'p.id']);
  if (scope !== null) query.whereIn('p.id', scope);
  if (ids) query.whereIn('p.id', ids);
  return query;
}

export async function findProject(db: Queryable, accountId: string, id: string): Promise<ProjectRow | undefined> {
  return (await findProjects(db, accountId, null, [id]))[0];
}

/**
 * The projects `ids` as forms in them are named (`formProject`: null for the account's default project), with the
 * settings each sets for its forms (`sets`: their names), by id; an id of no project of the account is left out.
 */
export async function findFormProjects(
  db: Queryable,
  accountId: string,
  ids: string[],
): Promise<Map<string, { project: FormProject; sets: string[] }>> {
  if (ids.length === 0) return new Map();
  const rows: { id: string; name: string; is_default: boolean; sets: string[] }[] = await db('projects')
    .where({ account_id: accountId })
    .whereIn('id', [...new Set(ids)])
    // not a payload: the names of the settings a project sets
    .select('id', 'name', 'is_default', db.raw('ARRAY(SELECT jsonb_object_keys(form_defaults)) AS sets'));
  return new Map(
    rows.map((r) => [
      r.id,
      {
        project: formProject({ project_id: r.id, project_name: r.name, project_is_default: r.is_default }),
        sets: r.sets,
      },
    ]),
  );
}

/**
 * The project's form defaults (undefined: no such project of the account). `lock`: its row held until the
 * transaction ends, `share` against a change of its defaults (a form made or moved in reads them as they commit),
 * `update` for that change.
 */
export async function findFormDefaults(
  db: Queryable,
  accountId: string,
  id: string,
  lock?: 'share' | 'update',
): Promise<FormDefaults | undefined> {
  const query = db('projects').where({ account_id: accountId, id });
  if (lock === 'share') query.forShare();
  if (lock === 'update') query.forUpdate();
  const row: { form_defaults: FormDefaults } | undefined = await query.first('form_defaults');
  return row?.form_defaults;
}

export async function setFormDefaults(
  db: Queryable,
  accountId: string,
  id: string,
  defaults: FormDefaults,
  at: Date,
): Promise<void> {
  await db('projects')
    .where({ account_id: accountId, id })
    .update({ form_defaults: JSON.stringify(defaults), updated_at: at });
}

/** The ids of the account's projects among `ids` (to check a list a caller names). */
export async function existingProjectIds(db: Queryable, accountId: string, ids: string[]): Promise<string[]> {
  const rows: { id: string }[] = await db('projects').where({ account_id: accountId }).whereIn('id', ids).select('id');
  return rows.map((r) => r.id);
}

/** Where a form goes that names no project: the account's default, or (limited to `scope`) its first project there. */
export async function defaultProjectId(
  db: Queryable,
  accountId: string,
  scope: string[] | null,
): Promise<string | undefined> {
  const query = db('projects').where({ account_id: accountId });
  if (scope !== null) query.whereIn('id', scope);
  const row = await query.orderBy([{ column: 'is_default', order: 'desc' }, 'created_at', 'id']).first('id');
  return row?.id;
}

export async function insertProject(
  db: Queryable,
  row: { id: string; account_id: string; name: string; form_defaults?: FormDefaults; created_at: Date },
): Promise<void> {
  const { form_defaults: defaults = {}, ...rest } = row;
  await db('projects').insert({ ...rest, form_defaults: JSON.stringify(defaults), updated_at: row.created_at });
}

export async function renameProject(
  db: Queryable,
  accountId: string,
  id: string,
  name: string,
  at: Date,
): Promise<boolean> {
  return (await db('projects').where({ account_id: accountId, id }).update({ name, updated_at: at })) > 0;
}

/** The project's forms, those in the trash too (a project holding any cannot go). */
export async function countFormsOfProject(db: Queryable, id: string): Promise<number> {
  const row = await db('forms').where({ project_id: id }).count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

/** Deletes the project and takes it off every member's and key's list of projects. */
export async function deleteProjectRow(db: Queryable, accountId: string, id: string): Promise<boolean> {
  for (const table of ['members', 'api_keys'])
    await db(table)
      .where({ account_id: accountId })
      .whereRaw('? = ANY(project_ids)', [id])
      .update({ project_ids: db.raw('array_remove(project_ids, ?)', [id]) });
  return (await db('projects').where({ account_id: accountId, id }).delete()) > 0;
}
