import { type Config, type Db, type Logger, type Mail, type Mailer } from '@intake/shared/base';
import { formAndProject, readableTime } from '@intake/shared/contracts';
import { recordNotification } from '@intake/shared/telemetry';
import { startPeriodic, type Worker } from '@intake/shared/runtime';
import {
  claimDigests,
  digestContents,
  parseDigestKey,
  queueDueDigests,
  recordDigest,
  type DigestContents,
} from '../repositories/digest.repository';
import { consoleReaders, findMailBranding } from '../repositories/mail-branding.repository';
import { digestHtml } from './mail-html';

/** Submissions a digest lists (the rest are counted, and a link leads to them). */
export const DIGEST_LISTED = 20;
/** After this many refused sends a digest is left `failed`. */
export const MAX_DIGEST_ATTEMPTS = 5;
/** A digest claimed longer ago than this by a sender that never recorded the outcome (it stopped) is claimed again. */
export const DIGEST_LEASE_MS = 10 * 60_000;
/** How often a delivery process looks for digests that are due. */
export const DIGEST_EVERY_MS = 60_000;

/** A submission in one line: its first values, joined. */
function summary(payload: Record<string, string>): string {
  const line = Object.values(payload)
    .map((v) => v.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .slice(0, 3)
    .join(' · ');
  return line.length > 140 ? `${line.slice(0, 139)}…` : line || '(no fields)';
}

/**
 * The digest mail of a form's window to one recipient, the form named with its client (`project`) when it has one,
 * times in the form's zone; the console's links only for a recipient who can open them (`withLinks`).
 */
export function digestMail(
  contents: DigestContents,
  props: {
    formId: string;
    start: Date;
    end: Date;
    to: string;
    withLinks: boolean;
    publicBaseUrl: string;
    fromName?: string;
    project?: string;
    timeZone?: string;
  },
): Mail {
  const { count, newest } = contents;
  const zone = props.timeZone ?? 'UTC';
  const inbox = `${props.publicBaseUrl}/console/forms/${encodeURIComponent(props.formId)}/submissions`;
  const period = `Received from ${readableTime(props.start, zone)} to ${readableTime(props.end, zone)}`;
  const items = newest.map((s) => ({
    received: readableTime(s.received_at, zone),
    summary: summary(s.payload),
    ...(props.withLinks ? { href: `${props.publicBaseUrl}/console/submissions/${encodeURIComponent(s.id)}` } : {}),
  }));
  const more = count > newest.length ? `and ${count - newest.length} more` : '';
  const client = props.project ? ` — ${props.project}` : '';
  const title = `${count} new submission${count === 1 ? '' : 's'} to "${contents.formName}"${client}`;
  const link = props.withLinks ? { href: inbox, label: 'Open the inbox' } : undefined;
  return {
    to: [props.to],
    subject: `Daily digest: ${formAndProject(contents.formName, props.project)} (${count} new)`
      .replace(/[\r\n]+/g, ' ')
      .slice(0, 250),
    text: [
      title,
      period,
      '',
      ...items.flatMap((i) => [`- ${i.received}: ${i.summary}`, ...(i.href ? [`  ${i.href}`] : [])]),
      ...(more ? [more] : []),
      ...(link ? ['', `All of them in the console: ${inbox}`] : []),
      '',
    ].join('\n'),
    html: digestHtml({ title, period, items, more, link }),
    autoSubmitted: 'auto-generated',
    ...(props.fromName ? { fromName: props.fromName } : {}),
  };
}

export interface DigestDeps {
  db: Db;
  mailer: Mailer;
  logger: Logger;
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  now: () => Date;
}

/**
 * Queues the digests that are due, then sends the pending ones: a short transaction claims them, the mails go after it
 * commits, each outcome recorded on its own (`sent`; `skipped` when nothing was received in the window or the form is
 * gone; back to `pending` for the next run after a refusal, `failed` after the last attempt). A sender that stops
 * between sending and recording leaves its claim, taken again after DIGEST_LEASE_MS. Returns how many were sent.
 */
export async function sendDigests(deps: DigestDeps, limit = 20): Promise<number> {
  const { db } = deps;
  await queueDueDigests(db, { now: deps.now(), limit });
  const now = deps.now();
  const claimed = await db.transaction((trx) =>
    claimDigests(trx, { limit, now, staleBefore: new Date(now.getTime() - DIGEST_LEASE_MS) }),
  );
  let sent = 0;
  for (const row of claimed) {
    const window = parseDigestKey(row.dedup_key);
    const contents = await digestContents(db, { ...window, listed: DIGEST_LISTED });
    if (!contents || contents.count === 0) {
      const error = contents ? 'nothing was received in its window' : 'the form was deleted';
      await recordDigest(db, row.id, { status: 'skipped', error });
      continue;
    }
    const { fromName, project, timeZone, place } = await findMailBranding(db, window.formId);
    const readers = await consoleReaders(db, place, row.recipients);
    const sentTo = new Set(row.sent_to);
    const refused: string[] = [];
    for (const to of row.recipients) {
      if (sentTo.has(to)) continue;
      const mail = digestMail(contents, {
        ...window,
        to,
        withLinks: readers.has(to),
        publicBaseUrl: deps.config.PUBLIC_BASE_URL,
        fromName,
        project,
        timeZone,
      });
      try {
        await deps.mailer.send(mail);
        sentTo.add(to);
      } catch (err) {
        deps.logger.warn({ err, notification: row.id }, 'a daily digest could not be sent to one of its recipients');
        refused.push(`${to}: ${String((err as Error).message ?? err)}`);
      }
    }
    if (refused.length > 0) {
      recordNotification({ outcome: 'failed' });
      const giveUp = row.attempt_count + 1 >= MAX_DIGEST_ATTEMPTS;
      const error = refused.join('; ');
      await recordDigest(db, row.id, { status: giveUp ? 'failed' : 'pending', error }, [...sentTo]);
      continue;
    }
    recordNotification({ outcome: 'sent' });
    await recordDigest(db, row.id, { status: 'sent', at: deps.now() }, [...sentTo]);
    sent++;
  }
  return sent;
}

/** The digest worker: every DIGEST_EVERY_MS, the digests that are due. */
export function startDigests(deps: DigestDeps & { intervalMs?: number }): Worker {
  return startPeriodic({
    intervalMs: deps.intervalMs ?? DIGEST_EVERY_MS,
    logger: deps.logger,
    failure: 'sending daily digests failed; will retry',
    task: () => sendDigests(deps),
  });
}
