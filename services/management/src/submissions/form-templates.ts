import {
  DEFAULT_SPAM_RULES,
  type AutoresponseSettings,
  type NotificationTemplate,
  type SpamRules,
} from '@intake/shared/contracts';

/**
 * The templates a form can start from (`POST /v1/forms { template }`): the settings each fills in, as if given in
 * the body (so they are the form's own, not its project's), and what the form's page on the site should send. What
 * the body gives itself wins over its template's value. Each names its fields' roles: the fields a real post always
 * has (`spam_rules.required_fields`: a post without one is spam), the one holding the sender's address (the
 * autoresponse's `email_field`, off until the owner turns it on) and the notification's subject naming the sender.
 */
export const FORM_TEMPLATES = {
  contact: {
    summary: 'a contact form: fields `name`, `email`, `message`',
    settings: {
      notification_template: { subject: 'Message from {{name}}' },
      spam_rules: { ...DEFAULT_SPAM_RULES, required_fields: ['email', 'message'], max_links: 2 },
      autoresponse: {
        enabled: false,
        subject: 'Thanks for your message',
        text: 'Hello {{name}},\n\nthank you for writing to us. We will get back to you soon.\n',
        email_field: 'email',
      },
    },
  },
  quote: {
    summary: 'a quote request: fields `name`, `email`, `phone`, `details`',
    settings: {
      notification_template: { subject: 'Quote request from {{name}}' },
      spam_rules: { ...DEFAULT_SPAM_RULES, required_fields: ['name', 'email', 'details'], max_links: 3 },
      autoresponse: {
        enabled: false,
        subject: 'We have your quote request',
        text: 'Hello {{name}},\n\nthank you for your request. We will send you a quote soon.\n',
        email_field: 'email',
      },
    },
  },
  job_application: {
    summary:
      'a job application: fields `name`, `email`, `position`, `message` and a file field `cv` (the page posts ' +
      '`multipart/form-data`; files need a plan with uploads)',
    settings: {
      notification_template: { subject: 'Application from {{name}} for {{position}}' },
      spam_rules: { ...DEFAULT_SPAM_RULES, required_fields: ['name', 'email', 'cv'], max_links: 5 },
      autoresponse: {
        enabled: false,
        subject: 'We have your application',
        text: 'Hello {{name}},\n\nthank you for applying. We will be in touch once we have read your application.\n',
        email_field: 'email',
      },
    },
  },
  newsletter: {
    summary: 'a newsletter sign-up: field `email`',
    settings: {
      notification_template: { subject: 'New subscriber: {{email}}' },
      spam_rules: { ...DEFAULT_SPAM_RULES, required_fields: ['email'], max_links: 0 },
      autoresponse: {
        enabled: false,
        subject: 'You are subscribed',
        text: 'Hello,\n\nthank you for subscribing to our newsletter.\n',
        email_field: 'email',
      },
    },
  },
} satisfies Record<
  string,
  {
    summary: string;
    settings: {
      notification_template: NotificationTemplate & { subject: string };
      spam_rules: SpamRules & { required_fields: string[]; max_links: number };
      autoresponse: AutoresponseSettings;
    };
  }
>;

export type FormTemplate = keyof typeof FORM_TEMPLATES;

/** The templates' names, in the table's order. */
export const FORM_TEMPLATE_NAMES = Object.keys(FORM_TEMPLATES) as FormTemplate[];

/** The templates as the API's description lists them. */
export const templatesDescription = () =>
  FORM_TEMPLATE_NAMES.map((name) => {
    const t = FORM_TEMPLATES[name];
    const required = t.settings.spam_rules.required_fields.map((f) => `\`${f}\``).join(', ');
    return (
      `\`${name}\`: ${t.summary}; required ${required}, at most ${t.settings.spam_rules.max_links} links, ` +
      `disposable addresses blocked, subject “${t.settings.notification_template.subject}”`
    );
  }).join('. ');
