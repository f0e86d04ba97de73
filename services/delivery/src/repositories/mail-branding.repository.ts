import { Value } from '@sinclair/typebox/value';
import { type Queryable } from '@intake/shared/base';
import {
  canonicalTimeZone,
  formProject,
  MailFromName,
  normaliseEmail,
  NotificationTemplate,
  type ProjectColumns,
} from '@intake/shared/contracts';

/**
 * What a form's owner made of its mails: the sender's display name, the notification's template and the time zone its
 * times are given in; and the client (its project, unless the account's default) that its mails name beside it.
 */
export interface MailBranding {
  /** The sender's display name: the form's `mail_from_name`, else its client's name when that can be one. */
  fromName?: string;
  template?: NotificationTemplate;
  /** The name of the form's project, when it is not the account's default (`formProject`). */
  project?: string;
  /** The IANA zone of the form's (or, inherited, its project's) `time_zone`; UTC when it has none Intl knows. */
  timeZone?: string;
  /** Where the form is: whose members may open its submissions in the console (`consoleReaders`). */
  place?: { accountId: string; projectId: string };
}

/**
 * The form's mail branding as it is now (a mail sent again after its form changed goes out as the form says now); a
 * value that does not fit its schema (written by hand) is left out, and a form gone has none.
 */
export async function findMailBranding(db: Queryable, formId: string): Promise<MailBranding> {
  const row:
    | ({
        account_id: string;
        mail_from_name: unknown;
        notification_template: unknown;
        time_zone: string;
      } & ProjectColumns)
    | undefined = await db('forms as f')
    .leftJoin('projects as p', 'p.id', 'f.project_id')
    .where('f.id', formId)
    .first(
      'f.account_id',
      'f.mail_from_name',
      'f.notification_template',
      'f.time_zone',
      'p.id as project_id',
      'p.name as project_name',
      'p.is_default as project_is_default',
    );
  if (!row) return {};
  const project = formProject(row);
  const fromName = [row.mail_from_name, project?.name].find((name) => Value.Check(MailFromName, name));
  return {
    ...(fromName !== undefined ? { fromName } : {}),
    ...(Value.Check(NotificationTemplate, row.notification_template) ? { template: row.notification_template } : {}),
    ...(project ? { project: project.name } : {}),
    timeZone: canonicalTimeZone(row.time_zone) ?? 'UTC',
    ...(row.project_id ? { place: { accountId: row.account_id, projectId: row.project_id } } : {}),
  };
}

/**
 * Which of `addresses` have a login that opens the form's submissions in the console: a member of the form's account
 * who has joined (an invitation not yet taken signs no one in), with that address (compared as people's addresses
 * are: `normaliseEmail`), and not limited to other projects than the form's. Answers the addresses as given.
 */
export async function consoleReaders(
  db: Queryable,
  place: MailBranding['place'],
  addresses: readonly string[],
): Promise<Set<string>> {
  if (!place || addresses.length === 0) return new Set();
  const rows: { email: string }[] = await db('members')
    .where({ account_id: place.accountId, status: 'active' })
    .whereIn('email', [...new Set(addresses.map(normaliseEmail))])
    .andWhere((w) => w.whereNull('project_ids').orWhereRaw('? = ANY(project_ids)', [place.projectId]))
    .select('email');
  const members = new Set(rows.map((r) => r.email));
  return new Set(addresses.filter((a) => members.has(normaliseEmail(a))));
}
