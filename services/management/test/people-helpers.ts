import type { Db } from '@intake/shared/base';
import type { Role } from '@intake/shared/auth';
import { addTestMember, factories, uniqueEmail } from '@intake/shared/testing';
import { hashPassword } from '../src/people/passwords';
import { api } from './helpers';

/** The password of every person these tests make. */
export const PASSWORD = 'correct horse battery staple';

const run = Math.floor(Math.random() * 0xffff).toString(16);
let serial = 0;
/**
 * A client of its own per call (an IPv6 /64, as the limits count clients), so per-client sign-in limits never mix
 * tests (documentation range, random per run: failures outlive a run in the table).
 */
export const clientAddress = () => ({ 'x-forwarded-for': `2001:db8:${run}:${(++serial).toString(16)}::1` });

/** An active member with PASSWORD in a fresh account (or `accountId`), and a client address of their own. */
export async function personWithPassword(db: Db, role: Role = 'editor', accountId?: string) {
  const account = accountId ? { id: accountId, managementKey: '' } : await factories.account(db);
  const email = uniqueEmail('person');
  const m = await addTestMember(db, account.id, role, { email, passwordHash: await hashPassword(PASSWORD) });
  return { accountId: account.id, key: account.managementKey, from: clientAddress(), ...m };
}

/** The session cookie and CSRF token of a sign-in answer, as headers for the next calls. */
export function sessionOf(res: { headers: Headers; body: { csrf_token?: string } }) {
  const token = /intake_session=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '';
  return { token, headers: { cookie: `intake_session=${token}`, 'x-csrf-token': res.body?.csrf_token ?? '' } };
}

/** Accepts an invitation link with a password; the session it opens, as headers. */
export async function accept(url: string, invitationUrl: string, password: string) {
  const res = await api(url)('POST', '/v1/invitations/accept', { token: invitationUrl.split('#')[1], password });
  return { res, ...sessionOf(res) };
}
