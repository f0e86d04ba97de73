import { Value } from '@sinclair/typebox/value';
import { type Queryable } from '@intake/shared/base';
import { formProject, MailFromName, NotificationTemplate, type ProjectColumns } from '@intake/shared/contracts';

/**
 * What a form's owner made of its mails: the sender's display name and the notification's template; and the client
 * (its project, unless the account's default) that its mails name beside it.
 */
export interface MailBranding {
  /** The sender's display name: the form's `mail_from_name`, else its client's name when that can be one. */
  fromName?: string;
  template?: NotificationTemplate;
  /** The name of the form's project, when it is not the account's default (`formProject`). */
  project?: string;
}

/**
 * The form's mail branding as it is now (a mail sent again after its form changed goes out as the form says now); a
 * value that does not fit its schema (written by hand) is left out, and a form gone has none.
 */
export async function findMailBranding(db: Queryable, formId: string): Promise<MailBranding> {
  const row: ({ mail_from_name: unknown; notification_template: unknown } & ProjectColumns) | undefined = await db(
    'forms as f',
  )
    .leftJoin('projects as p', 'p.id', 'f.project_id')
    .where('f.id', formId)
    .first(
      'f.mail_from_name',
      'f.notification_template',
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
  };
}
