import { answerOf, api, ok, session, signedOutReason } from './api';
import type { ResponseBody } from './api-types';
import { ACCOUNT_WIDE, OPERATION_ROLES } from './operation-roles';

export type SignInOptions = ResponseBody<'getSignInOptions'>;
export type Member = ResponseBody<'listMembers'>['data'][number];
export type NewMember = ResponseBody<'inviteMember', 201>;
export type AuditEntry = ResponseBody<'listAuditLog'>['data'][number];
export type Role = Member['role'];

/** Roles in order: each may do what the ones before it may. */
export const ROLES: Role[] = ['viewer', 'editor', 'admin', 'owner'];
export const atLeast = (role: Role | undefined, needed: Role) =>
  role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(needed);

export { OPERATION_ROLES };

/** An operation of the API, by its operationId. */
export type Operation = keyof typeof OPERATION_ROLES;

/**
 * Whether the person signed in may call `operation` (its least role, `x-required-role` in the OpenAPI document, and
 * for a person limited to projects, not one about the whole account): the console shows no control its user would be
 * refused.
 */
export const may = (operation: Operation) =>
  atLeast(session.value?.role as Role | undefined, OPERATION_ROLES[operation]) &&
  !(session.value?.project_ids && ACCOUNT_WIDE.includes(operation));

/** A password sign-in waiting for its second step: the half-open session's CSRF token, and whether to enrol first. */
export interface SecondFactorDue {
  csrf: string;
  enrolmentRequired: boolean;
}

/** E-mail and password: a session, or (with a second factor due) what the second step needs. */
export async function signInWithPassword(email: string, password: string): Promise<SecondFactorDue | null> {
  const { status, data } = await answerOf(api.POST('/v1/sessions/password', { body: { email, password } }));
  if (status === 202) {
    const due = data as unknown as ResponseBody<'signInWithPassword', 202>;
    return { csrf: due.csrf_token, enrolmentRequired: due.enrolment_required };
  }
  signedIn(data as NonNullable<typeof session.value>);
  return null;
}

/** The console's session from here on (after a password, its second step, or enrolment). */
export function signedIn(s: NonNullable<typeof session.value>): void {
  signedOutReason.value = null;
  session.value = s;
}

/** The second step: the authenticator's code or a recovery code, with the half-open session's CSRF token. */
export async function verifySecondFactor(due: SecondFactorDue, code: string): Promise<void> {
  const done = await ok(api.POST('/v1/sessions/two-factor', { body: { code }, headers: { 'x-csrf-token': due.csrf } }));
  signedIn(done);
}

/** The token after `#` in an invitation or reset link (kept out of server logs and Referer headers). */
export const linkToken = () => decodeURIComponent(window.location.hash.slice(1));
