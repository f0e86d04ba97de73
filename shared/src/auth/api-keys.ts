import { randomBytes } from 'node:crypto';
import type { Db } from '../base/db';
import { problem } from '../contracts/problems';
import { sha256Hex } from '../base/secrets';
import type { Role } from './roles';

export type KeyType = 'submission' | 'management';

export const KEY_PREFIXES: Record<KeyType, string> = { submission: 'svc_sub_', management: 'svc_mgmt_' };

/** Characters of the full key kept (with the type prefix) to identify a key in lists. */
const SHOWN_SECRET_CHARS = 6;

/** A new key: the type prefix and 32 random bytes (256 bits) in base64url. Only `prefix` and `hash` are ever stored. */
export function generateKey(type: KeyType): { key: string; prefix: string; hash: string } {
  const key = `${KEY_PREFIXES[type]}${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, KEY_PREFIXES[type].length + SHOWN_SECRET_CHARS), hash: sha256Hex(key) };
}

export function keyTypeOf(token: string): KeyType | undefined {
  if (token.startsWith(KEY_PREFIXES.management)) return 'management';
  if (token.startsWith(KEY_PREFIXES.submission)) return 'submission';
  return undefined;
}

/** Who made a request, as the audit log names them. */
export interface Actor {
  type: 'member' | 'api_key' | 'operator' | 'system';
  id: string | null;
  label: string | null;
}

export interface Principal {
  accountId: string;
  /** The key of the request, or the key a console session was opened with; null for a member's session. */
  keyId: string | null;
  type: KeyType;
  /** What the request may do (see roles.ts): the key's role, or the member's as it is now. */
  role: Role;
  /**
   * The projects the member or key is limited to; null: the whole account. A limited principal reaches only those
   * projects' forms and what they hold (see projects.ts); only viewers and editors are ever limited.
   */
  projectIds: string[] | null;
  /** Set when the request came from a member's console session. */
  memberId?: string;
  actor: Actor;
  /** Set when the request was authenticated by a console session cookie instead of a key. */
  session?: SessionInfo;
}

/** A console session, as the request that carried its cookie sees it. */
export interface SessionInfo {
  tokenHash: string;
  csrfToken: string;
  createdAt: Date;
  expiresAt: Date;
  idleExpiresAt: Date;
  /** The sign-in that opened it passed a second factor (a code, or SSO); a key session never did. */
  secondFactor: boolean;
}

/** `last_used_at` is refreshed at most this often per key, so using a key costs no write per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** Looks a key up by its hash. Revoked or unknown keys are refused with 403 invalid-key. */
export async function authenticateKey(db: Db, token: string, now: Date = new Date()): Promise<Principal> {
  const type = keyTypeOf(token);
  if (!type || token.length > 200) throw problem('invalid-key', 'The API key is not valid');
  const row = await db('api_keys')
    .where({ key_hash: sha256Hex(token) })
    .first('id', 'account_id', 'type', 'revoked_at', 'last_used_at', 'role', 'name', 'prefix', 'project_ids');
  if (!row || row.revoked_at !== null || row.type !== type)
    throw problem('invalid-key', 'The API key is not valid or has been revoked');
  if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() >= LAST_USED_RESOLUTION_MS) {
    await db('api_keys').where({ id: row.id }).update({ last_used_at: now });
  }
  return {
    accountId: row.account_id,
    keyId: row.id,
    type: row.type,
    // A management key made without a role (before roles existed, or by a caller naming none) is an admin key.
    role: row.type === 'management' ? (row.role ?? 'admin') : 'viewer',
    projectIds: row.project_ids ?? null,
    actor: { type: 'api_key', id: row.id, label: row.name ?? row.prefix },
  };
}
