import nodemailer from 'nodemailer';
import type { Config } from './config';
import type { Logger } from './logger';

export interface Mail {
  to: string[];
  subject: string;
  text: string;
  html?: string;
  replyTo?: string;
  /** The sender's display name (a form's `mail_from_name`); the address is always MAIL_FROM's. */
  fromName?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/**
 * SMTP through nodemailer when SMTP_URL is set; otherwise each mail is logged, not sent. Rejects when
 * the server refuses. The connections are pooled (nodemailer's defaults: up to 5, each reused for up
 * to 100 mails): a connection per mail cost a TCP and SMTP handshake each; `?pool=false` in
 * SMTP_URL turns pooling off.
 */
export function createMailer(config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'>, logger: Logger): Mailer {
  if (!config.SMTP_URL) {
    return {
      async send(mail) {
        logger.info(
          { mail: { to: mail.to, subject: mail.subject, replyTo: mail.replyTo, text: mail.text } },
          'SMTP_URL is not set: mail logged, not sent',
        );
      },
      close() {},
    };
  }
  const transport = nodemailer.createTransport({ pool: true, url: config.SMTP_URL }, { from: config.MAIL_FROM });
  const fromAddress = addressOf(config.MAIL_FROM);
  return {
    async send(mail) {
      await transport.sendMail({
        ...(mail.fromName ? { from: { name: mail.fromName, address: fromAddress } } : {}),
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        replyTo: mail.replyTo,
      });
    },
    close() {
      transport.close();
    },
  };
}

/** The address of a MAIL_FROM such as `Intake <no-reply@example.com>` or `no-reply@example.com`. */
export function addressOf(from: string): string {
  return /<([^<>]+)>\s*$/.exec(from)?.[1]?.trim() ?? from.trim();
}
