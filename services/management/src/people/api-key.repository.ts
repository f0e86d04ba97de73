import type { Knex } from 'knex';
import { NEWEST_FIRST, type Queryable } from '@intake/shared/base';
import { type KeyRole, type KeyType } from '@intake/shared/auth';

export interface ApiKeyRow {
  id: string;
  account_id: string;
  type: KeyType;
  role: KeyRole | null;
  /** The projects a management key is limited to; null: the whole account. */
  project_ids: string[] | null;
  name: string | null;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_by_type: string | null;
  created_by_id: string | null;
  created_by_label: string | null;
}

const COLUMNS = [
  'id',
  'account_id',
  'type',
  'role',
  'project_ids',
  'name',
  'prefix',
  'created_at',
  'last_used_at',
  'revoked_at',
  'created_by_type',
  'created_by_id',
  'created_by_label',
];

export async function insertApiKey(
  db: Queryable,
  row: {
    id: string;
    account_id: string;
    type: KeyType;
    role?: KeyRole | null;
    project_ids?: string[] | null;
    name: string | null;
    prefix: string;
    key_hash: string;
    created_at: Date;
    created_by_type: string | null;
    created_by_id: string | null;
    created_by_label: string | null;
  },
): Promise<ApiKeyRow> {
  const [created] = await db('api_keys').insert(row).returning(COLUMNS);
  return created as ApiKeyRow;
}

export async function listApiKeys(db: Queryable, accountId: string): Promise<ApiKeyRow[]> {
  return db('api_keys').where({ account_id: accountId }).orderBy(NEWEST_FIRST).select(COLUMNS);
}

export async function findApiKey(db: Queryable, accountId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db('api_keys').where({ account_id: accountId, id }).first(COLUMNS);
}

export async function markApiKeyRevoked(db: Queryable, accountId: string, id: string, at: Date): Promise<void> {
  await db('api_keys').where({ account_id: accountId, id }).whereNull('revoked_at').update({ revoked_at: at });
}

export async function countActiveApiKeys(db: Queryable, accountId: string, type: KeyType): Promise<number> {
  const row = await db('api_keys')
    .where({ account_id: accountId, type })
    .whereNull('revoked_at')
    .count<{ count: string }[]>('id as count')
    .first();
  return Number(row?.count ?? 0);
}

/** Creation times of the keys minted since `since`, oldest first (for the minting cap). */
export async function findKeyMintTimesSince(db: Queryable, accountId: string, since: Date): Promise<Date[]> {
  const rows = await db('api_keys')
    .where({ account_id: accountId })
    .where('created_at', '>=', since)
    .orderBy('created_at')
    .select('created_at');
  return rows.map((r: { created_at: Date }) => r.created_at);
}

/** Serialises minting per account so the cap holds under concurrent requests. */
export async function lockAccount(trx: Knex.Transaction, accountId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`api-keys:${accountId}`]);
}

/** The active keys a member minted. */
export async function findActiveKeysMintedBy(db: Queryable, accountId: string, memberId: string): Promise<ApiKeyRow[]> {
  return db('api_keys')
    .where({ account_id: accountId, created_by_type: 'member', created_by_id: memberId })
    .whereNull('revoked_at')
    .orderBy(NEWEST_FIRST)
    .select(COLUMNS);
}
