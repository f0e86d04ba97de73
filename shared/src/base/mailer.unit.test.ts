import { Writable } from 'node:stream';
import pino from 'pino';
import { createMailer, mailWarning, type Mail } from './mailer';

/** A pino logger whose lines land in `lines`, as the process's stdout would carry them. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

const reset: Mail = {
  to: ['owner@intake.test'],
  subject: 'Reset your Intake password',
  text: 'Open this link within an hour: https://forms.example.com/console/reset#SECRET-RESET-TOKEN-42',
  html: '<a href="https://forms.example.com/console/reset#SECRET-RESET-TOKEN-42">reset</a>',
  replyTo: 'visitor@example.com',
};

describe('createMailer without SMTP_URL', () => {
  it('in production drops each mail, logging only to whom and its subject, never its text or links', async () => {
    const { logger, lines } = capturedLogger();
    const mailer = createMailer({ MAIL_FROM: 'i@intake.test', NODE_ENV: 'production' }, logger);
    await mailer.send(reset);
    mailer.close();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      msg: 'SMTP_URL is not set: mail dropped, not sent',
      mail: { to: ['owner@intake.test'], subject: 'Reset your Intake password' },
    });
    expect(JSON.stringify(lines)).not.toMatch(/SECRET-RESET-TOKEN|visitor@example\.com|console\/reset/);
  });

  it('without NODE_ENV (a caller that did not say) drops the mail as in production', async () => {
    const { logger, lines } = capturedLogger();
    await createMailer({ MAIL_FROM: 'i@intake.test' }, logger).send(reset);
    expect(JSON.stringify(lines)).not.toContain('SECRET-RESET-TOKEN');
    expect(lines[0]?.['msg']).toBe('SMTP_URL is not set: mail dropped, not sent');
  });

  it('outside production (npm start) logs the mail whole, so a newcomer finds the link', async () => {
    const { logger, lines } = capturedLogger();
    await createMailer({ MAIL_FROM: 'i@intake.test', NODE_ENV: 'development' }, logger).send(reset);
    expect(lines[0]).toMatchObject({ level: 30, mail: { to: ['owner@intake.test'], text: reset.text } });
  });

  it('has a start-up warning saying which, and none with SMTP_URL', () => {
    expect(mailWarning({ NODE_ENV: 'production', SMTP_URL: undefined })).toMatch(/dropped, not sent; set SMTP_URL/);
    expect(mailWarning({ NODE_ENV: 'development', SMTP_URL: undefined })).toMatch(/written to this log/);
    expect(mailWarning({ NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:25' })).toBeUndefined();
  });
});
