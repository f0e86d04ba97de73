import { newId } from '../contracts/ids';
import { openSession, SESSION_COOKIE, CSRF_HEADER } from '../auth/sessions';
import { generateKey } from '../auth/api-keys';
import type { KeyRole, Role } from '../auth/roles';
import type { Db } from '../base/db';

let counter = 0;
/** A fresh address under `.example` (never a public domain). */
export const uniqueEmail = (name = 'person') => `${name}-${Date.now().toString(36)}-${++counter}@people.example`;

/** An active member of the account with `role` (and its person), made directly in the database. */
export async function addTestMember(
  db: Db,
  accountId: string,
  role: Role,
  props: { email?: string; status?: 'active' | 'invited'; passwordHash?: string; projectIds?: string[] } = {},
): Promise<{ memberId: string; userId: string; email: string }> {
  const email = (props.email ?? uniqueEmail(role)).toLowerCase();
  let user = await db('users').where({ email }).first('id');
  if (!user) {
    user = { id: newId('user') };
    await db('users').insert({ id: user.id, email, password_hash: props.passwordHash ?? null });
  }
  const memberId = newId('member');
  await db('members').insert({
    id: memberId,
    account_id: accountId,
    email,
    user_id: user.id,
    role,
    status: props.status ?? 'active',
    project_ids: props.projectIds ?? null,
  });
  return { memberId, userId: user.id as string, email };
}

/** The request headers of a console session: its cookie, and its CSRF token (sent on every method; harmless on GET). */
export interface SessionHeaders {
  cookie: string;
  [CSRF_HEADER]: string;
}

/** A console session for a member, as headers a test can send. */
export async function memberSessionHeaders(db: Db, accountId: string, memberId: string): Promise<SessionHeaders> {
  const { token, session } = await openSession(db, { kind: 'member', accountId, memberId }, new Date());
  return { cookie: `${SESSION_COOKIE}=${token}`, [CSRF_HEADER]: session.csrfToken };
}

/** A management key with `role`, made directly in the database. */
export async function managementKeyWithRole(
  db: Db,
  accountId: string,
  role: KeyRole,
  props: { projectIds?: string[] } = {},
): Promise<string> {
  const { key, prefix, hash } = generateKey('management');
  await db('api_keys').insert({
    id: newId('apiKey'),
    account_id: accountId,
    type: 'management',
    role,
    project_ids: props.projectIds ?? null,
    prefix,
    key_hash: hash,
  });
  return key;
}
