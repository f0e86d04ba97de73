import type { Queryable } from '@intake/shared/base';

/** An inbox's filters as the console keeps them in its URL: the view, days, search and order. */
export interface ViewFilters {
  status?: 'received' | 'spam';
  since?: string;
  until?: string;
  q?: string;
  order?: 'asc' | 'desc';
}

export interface SavedViewRow {
  id: string;
  account_id: string;
  form_id: string;
  name: string;
  filters: ViewFilters;
  created_by: string | null;
  created_at: Date;
}

/** The form's saved views, by name. */
export function findSavedViews(db: Queryable, accountId: string, formId: string): Promise<SavedViewRow[]> {
  return db('saved_views').where({ account_id: accountId, form_id: formId }).orderBy('name');
}

export async function insertSavedView(db: Queryable, row: Omit<SavedViewRow, 'created_at'> & { created_at: Date }) {
  const [created] = await db('saved_views')
    .insert({ ...row, filters: JSON.stringify(row.filters) })
    .returning('*');
  return created as SavedViewRow;
}

/** Deletes the account's view; false when it has none by that id. */
export async function deleteSavedViewRow(db: Queryable, accountId: string, id: string): Promise<boolean> {
  return (await db('saved_views').where({ account_id: accountId, id }).delete()) > 0;
}
