import { Value } from '@sinclair/typebox/value';
import { MailFromName, NotificationTemplate, type Queryable } from '@intake/shared';

/** What a form's owner made of its mails: the sender's display name and the notification's template. */
export interface MailBranding {
  fromName?: string;
  template?: NotificationTemplate;
}

/**
 * The form's mail branding as it is now (a mail sent again after its form changed goes out as the form says now); a
 * value that does not fit its schema (written by hand) is left out, and a form gone has none.
 */
export async function findMailBranding(db: Queryable, formId: string): Promise<MailBranding> {
  const row: { mail_from_name: unknown; notification_template: unknown } | undefined = await db('forms')
    .where({ id: formId })
    .first('mail_from_name', 'notification_template');
  if (!row) return {};
  return {
    ...(Value.Check(MailFromName, row.mail_from_name) ? { fromName: row.mail_from_name } : {}),
    ...(Value.Check(NotificationTemplate, row.notification_template) ? { template: row.notification_template } : {}),
  };
}
