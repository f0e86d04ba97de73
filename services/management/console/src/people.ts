import { api, ok, session, signedOutReason } from './api';
import type { ResponseBody } from './api-types';

export type SignInOptions = ResponseBody<'getSignInOptions'>;
export type Member = ResponseBody<'listMembers'>['data'][number];
export type NewMember = ResponseBody<'inviteMember', 201>;
export type AuditEntry = ResponseBody<'listAuditLog'>['data'][number];
export type Role = Member['role'];

/** Roles in order: each may do what the ones before it may. */
export const ROLES: Role[] = ['viewer', 'editor', 'admin', 'owner'];
export const atLeast = (role: Role | undefined, needed: Role) =>
  role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(needed);

/** E-mail and password; a session, or (with a second factor due) a message that it is needed. */
export async function signInWithPassword(email: string, password: string): Promise<void> {
  const { data, error, response } = await api.POST('/v1/sessions/password', { body: { email, password } });
  if (!response.ok) await ok(Promise.resolve({ data, error, response }));
  if (response.status === 202)
    throw new Error('This account needs a second factor, which this console cannot ask for yet');
  signedOutReason.value = null;
  session.value = data as NonNullable<typeof session.value>;
}

/** The token after `#` in an invitation or reset link (kept out of server logs and Referer headers). */
export const linkToken = () => decodeURIComponent(window.location.hash.slice(1));
