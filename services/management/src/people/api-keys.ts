import { type Db, type Queryable } from '@intake/shared/base';
import { newId, problem } from '@intake/shared/contracts';
import { generateKey, type Actor, type KeyRole, type KeyType } from '@intake/shared/auth';
import {
  countActiveApiKeys,
  findApiKey,
  findKeyMintTimesSince,
  insertApiKey,
  lockAccount,
  markApiKeyRevoked,
  type ApiKeyRow,
} from './api-key.repository';
import type { Audit } from '../platform/audit-trail';

export interface MintLimit {
  limit: number;
  windowSeconds: number;
}

/**
 * Mints a key of `type` for the account. The full key is returned this once; only its prefix
 * and hash are stored. At most `cap.limit` keys per account per window: beyond that 429.
 */
export async function mintApiKey(props: {
  db: Db;
  audit: Audit;
  accountId: string;
  type: KeyType;
  /** A management key's role (admin when unset); null for a submission key. */
  role?: KeyRole | null;
  /** The projects a viewer or editor key is limited to (checked by `projectLimit`); null: the whole account. */
  projectIds?: string[] | null;
  name?: string | null;
  /** Who mints it (kept with the key: `created_by`). */
  by: Actor;
  now: Date;
  cap: MintLimit;
}): Promise<ApiKeyRow & { key: string }> {
  const { db, accountId, type, now, cap } = props;
  return db.transaction(async (trx) => {
    await lockAccount(trx, accountId);
    const minted = await findKeyMintTimesSince(trx, accountId, new Date(now.getTime() - cap.windowSeconds * 1000));
    if (minted.length >= cap.limit) {
      const oldest = minted[minted.length - cap.limit] as Date;
      const retryAfter = Math.max(1, Math.ceil((oldest.getTime() + cap.windowSeconds * 1000 - now.getTime()) / 1000));
      throw problem(
        'rate-limited',
        `At most ${cap.limit} keys can be created per ${cap.windowSeconds} seconds`,
        {},
        { 'Retry-After': String(retryAfter) },
      );
    }
    const { key, prefix, hash } = generateKey(type);
    const row = await insertApiKey(trx, {
      id: newId('apiKey', now.getTime()),
      account_id: accountId,
      type,
      role: type === 'management' ? (props.role ?? 'admin') : null,
      project_ids: props.projectIds ?? null,
      name: props.name ?? null,
      prefix,
      key_hash: hash,
      created_at: now,
      created_by_type: props.by.type,
      created_by_id: props.by.id,
      created_by_label: props.by.label?.slice(0, 300) ?? null,
    });
    const target = { type: 'api_key', id: row.id };
    const details = { type, role: row.role, ...(row.project_ids ? { project_ids: row.project_ids } : {}) };
    await props.audit.record(trx, { action: 'api_key.created', target, details });
    return { ...row, key };
  });
}

/**
 * Revokes a key at once. The account's last active management key cannot be revoked
 * (that would lock the owner out): mint a new one first.
 */
export async function revokeApiKey(props: {
  db: Db;
  audit: Audit;
  accountId: string;
  id: string;
  now: Date;
}): Promise<void> {
  const { db, accountId, id, now } = props;
  await db.transaction(async (trx) => {
    await lockAccount(trx, accountId);
    const key = await findApiKey(trx, accountId, id);
    if (!key) throw problem('not-found', `No API key ${id}`);
    if (key.revoked_at) return; // revoked before: nothing changed, nothing to record
    await revokeKeys(trx, accountId, [key], now);
    await props.audit.record(trx, { action: 'api_key.revoked', target: { type: 'api_key', id } });
  });
}

/**
 * Revokes active keys of the account, in the caller's transaction (which holds `lockAccount`): refused when they are
 * all of the account's active management keys, so no change locks an account out of its keys.
 */
export async function revokeKeys(trx: Queryable, accountId: string, keys: ApiKeyRow[], now: Date): Promise<void> {
  const management = keys.filter((k) => k.type === 'management').length;
  if (management > 0 && (await countActiveApiKeys(trx, accountId, 'management')) <= management)
    throw problem(
      'conflict',
      keys.length === 1
        ? 'This is the account’s last active management key; create another one before revoking it'
        : 'These are the account’s only active management keys: create another one before revoking them',
    );
  for (const key of keys) await markApiKeyRevoked(trx, accountId, key.id, now);
}
