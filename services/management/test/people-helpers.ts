import { api } from './helpers';

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
