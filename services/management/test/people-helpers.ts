import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import PostalMime from 'postal-mime';
import { api } from './helpers';

export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
}

/** A real SMTP server on loopback that keeps what it receives. */
export async function startSmtp() {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        void PostalMime.parse(Buffer.concat(chunks)).then((m) => {
          mails.push({
            to: (m.to ?? []).map((a) => ('address' in a ? String(a.address) : '')),
            subject: m.subject ?? '',
            text: m.text ?? '',
          });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    mails,
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
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
