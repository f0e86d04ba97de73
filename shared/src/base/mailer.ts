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
  /**
   * RFC 3834's `Auto-Submitted`: `auto-replied` on a reply made by a machine (an autoresponse), `auto-generated` on
   * other mail a machine sends (notifications, digests), so that out-of-office and other responders stay quiet. Both
   * also carry `X-Auto-Response-Suppress: All`, which Exchange reads instead.
   */
  autoSubmitted?: 'auto-generated' | 'auto-replied';
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/**
 * SMTP through nodemailer when SMTP_URL is set. Rejects when the server refuses. The connections are pooled
 * (nodemailer's defaults: up to 5, each reused for up to 100 mails): a connection per mail cost a TCP and SMTP
 * handshake each; `?pool=false` in SMTP_URL turns pooling off.
 *
 * Without SMTP_URL nothing is sent. Outside production (`npm start`, NODE_ENV unset or `development`) each mail is
 * logged whole, so a newcomer finds their reset or sign-up link in the log; in production (or when NODE_ENV is not
 * given) only that a mail was dropped, to whom and its subject: its text holds reset, invitation and sign-up links and
 * submissions, which a log must not keep.
 */
export function createMailer(
  config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'> & Partial<Pick<Config, 'NODE_ENV'>>,
  logger: Logger,
): Mailer {
  if (!config.SMTP_URL) return mailLogsWholeMail(config) ? loggingMailer(logger) : droppingMailer(logger);
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
        ...(mail.autoSubmitted
          ? { headers: { 'Auto-Submitted': mail.autoSubmitted, 'X-Auto-Response-Suppress': 'All' } }
          : {}),
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

/** Whether a process without SMTP_URL may log a mail whole: only when NODE_ENV is given and is not production. */
function mailLogsWholeMail(config: Partial<Pick<Config, 'NODE_ENV'>>): boolean {
  return config.NODE_ENV !== undefined && config.NODE_ENV !== 'production';
}

function loggingMailer(logger: Logger): Mailer {
  return {
    async send(mail) {
      logger.info(
        { mail: { to: mail.to, subject: mail.subject, replyTo: mail.replyTo, text: mail.text } },
        'SMTP_URL is not set: mail logged, not sent (NODE_ENV is not production)',
      );
    },
    close() {},
  };
}

function droppingMailer(logger: Logger): Mailer {
  return {
    async send(mail) {
      logger.warn({ mail: { to: mail.to, subject: mail.subject } }, 'SMTP_URL is not set: mail dropped, not sent');
    },
    close() {},
  };
}

/** The start-up warning of a process that will drop or log its mail, or undefined when SMTP_URL is set. */
export function mailWarning(config: Pick<Config, 'SMTP_URL' | 'NODE_ENV'>): string | undefined {
  if (config.SMTP_URL) return undefined;
  return mailLogsWholeMail(config)
    ? 'SMTP_URL is not set: mail (password resets, invitations, notifications) is written to this log, not sent'
    : 'SMTP_URL is not set: mail (password resets, invitations, notifications) is dropped, not sent; set SMTP_URL';
}
