import type { Db } from '../base/db';
import { ID_PREFIXES, isId, type IdKind } from '../contracts/ids';
import { problem } from '../contracts/problems';
import type { Principal } from './api-keys';

/**
 * What a principal limited to projects may name. Every id a request carries (its path, its query's `*_id`
 * parameters, its body's `id`, `ids`, `*_id` and `*_ids` fields at any depth) of a kind that lives in a project
 * must lie in one of the principal's projects, or the request is answered 404 before its handler runs, as an id of
 * another account is: one check for every route, today's and tomorrow's, instead of one per query. Lists that name
 * no id (forms, projects, usage) filter by `principal.projectIds` themselves.
 */
const SCOPED: Partial<Record<IdKind, string>> = {
  project: 'SELECT p.id FROM projects p WHERE p.account_id = :account AND p.id = ANY(:ids) AND p.id = ANY(:scope)',
  form: 'SELECT f.id FROM forms f WHERE f.account_id = :account AND f.id = ANY(:ids) AND f.project_id = ANY(:scope)',
  submission: `SELECT s.id FROM submissions s JOIN forms f ON f.id = s.form_id
    WHERE s.account_id = :account AND s.id = ANY(:ids) AND f.project_id = ANY(:scope)`,
  file: `SELECT x.id FROM submission_files x JOIN submissions s ON s.id = x.submission_id JOIN forms f ON f.id = s.form_id
    WHERE s.account_id = :account AND x.id = ANY(:ids) AND f.project_id = ANY(:scope)`,
  webhook: `SELECT w.id FROM webhooks w JOIN forms f ON f.id = w.form_id
    WHERE f.account_id = :account AND w.id = ANY(:ids) AND f.project_id = ANY(:scope)`,
  delivery: `SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN forms f ON f.id = w.form_id
    WHERE f.account_id = :account AND d.id = ANY(:ids) AND f.project_id = ANY(:scope)`,
  savedView: `SELECT v.id FROM saved_views v JOIN forms f ON f.id = v.form_id
    WHERE v.account_id = :account AND v.id = ANY(:ids) AND f.project_id = ANY(:scope)`,
};
const KIND_OF_PREFIX = new Map(Object.entries(ID_PREFIXES).map(([kind, prefix]) => [`${prefix}_`, kind as IdKind]));

/** The scoped ids in a value, by kind: strings under `id`, `ids`, `*_id` and `*_ids` keys, at any depth. */
function collectIds(value: unknown, into: Map<IdKind, Set<string>>, named = false): void {
  if (typeof value === 'string') {
    if (!named) return;
    const kind = KIND_OF_PREFIX.get(value.slice(0, value.indexOf('_') + 1));
    if (kind && SCOPED[kind] && isId(kind, value)) into.set(kind, (into.get(kind) ?? new Set()).add(value));
  } else if (Array.isArray(value)) {
    for (const item of value.slice(0, 1000)) collectIds(item, into, named);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) collectIds(inner, into, /(^|_)ids?$/.test(key));
  }
}

/**
 * 404 unless every scoped id of the request lies in the principal's projects (nothing to check for a principal
 * of the whole account). `path` holds the route's parameters, all of which are checked.
 */
export async function requireInProjects(
  db: Db,
  principal: Principal,
  request: { path: Record<string, unknown>; query: unknown; body: unknown },
): Promise<void> {
  const scope = principal.projectIds;
  if (scope === null) return;
  const ids = new Map<IdKind, Set<string>>();
  for (const value of Object.values(request.path)) collectIds(value, ids, true);
  collectIds(request.query, ids);
  collectIds(request.body, ids);
  for (const [kind, set] of ids) {
    const { rows } = await db.raw<{ rows: unknown[] }>(SCOPED[kind] as string, {
      account: principal.accountId,
      ids: [...set],
      scope,
    });
    if (rows.length < set.size)
      throw problem('not-found', `No such ${kind === 'savedView' ? 'view' : kind} in the projects you can see`);
  }
}

/**
 * The projects a list is about: the one its query names (requireInProjects has already refused a project the
 * principal may not see), or else every project the principal may see (null: the whole account).
 */
export const projectsAskedFor = (principal: Principal, projectId: string | undefined): string[] | null =>
  projectId ? [projectId] : principal.projectIds;
