import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import PostalMime from 'postal-mime';

/** A mail as the SMTP stand-in received it: the envelope, the raw message, and its parsed subject and text. */
export interface SinkMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  text: string;
}

export type SmtpSink = Awaited<ReturnType<typeof smtpSink>>;

/**
 * A real SMTP server on loopback that keeps every mail it accepts. It answers a whole mail with a temporary
 * failure (451), as a mail server in trouble does, for the first `refuseFirst` mails and while `refuse(true)`
 * holds; a refused mail is not kept.
 */
export async function smtpSink(options: { refuseFirst?: number } = {}) {
  const mails: SinkMail[] = [];
  const state = { refusing: false, toRefuse: options.refuseFirst ?? 0, connections: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onConnect(_session, callback) {
      state.connections += 1;
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const refused = state.refusing || state.toRefuse > 0;
        if (refused) {
          if (state.toRefuse > 0) state.toRefuse -= 1;
          return callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
        }
        const raw = Buffer.concat(chunks);
        PostalMime.parse(raw).then((parsed) => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: raw.toString('utf8'),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
          });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    mails,
    refuse: (refusing: boolean) => void (state.refusing = refusing),
    connections: () => state.connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
