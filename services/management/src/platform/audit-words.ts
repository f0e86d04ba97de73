import { AUDIT_ACTIONS, type AuditAction } from '@intake/shared/audit';

/** What an entry says, as the audit log's reader needs it: its names resolved (null when the object is gone). */
export interface Worded {
  actor: { type: string; id: string | null; label: string | null };
  action: string;
  target: { type: string; id: string | null; name: string | null } | null;
  details: Record<string, unknown>;
  /** The client the target belongs to: its project's name, when that is not the account's default. */
  client?: string;
}

type Say = (target: string, d: Record<string, unknown>) => string;

const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
const plural = (n: unknown, one: string, many = `${one}s`) => `${text(n) || 'some'} ${Number(n) === 1 ? one : many}`;
const BULK: Record<string, string> = {
  delete: 'moved {n}{of} to the trash',
  spam: 'marked {n}{of} as spam',
  received: 'marked {n}{of} as not spam',
};

/** Each action as a verb phrase about its target (`target` is already worded: “the form “Contact””). */
const SAY: Record<(typeof AUDIT_ACTIONS)[number], Say> = {
  'member.invited': (t, d) => `invited ${text(d['email']) || t} as ${text(d['role']) || 'a member'}`,
  'member.joined': (t, d) => `joined the account${d['method'] ? ` (${text(d['method'])})` : ''}`,
  'member.role_changed': (t, d) => `changed the role of ${t} from ${text(d['from'])} to ${text(d['to'])}`,
  'member.removed': (t, d) =>
    `removed ${text(d['email']) || t}${d['keys_revoked'] ? ` and revoked ${plural(d['keys_revoked'], 'key')}` : ''}`,
  'member.invitation_spent': (t) => `spent the invitation of ${t}`,
  'member.invitation_resent': (t) => `sent ${t} a new invitation`,
  'session.signed_in': (_t, d) => `signed in${d['method'] ? ` (${text(d['method'])})` : ''}`,
  'session.sign_in_failed': (_t, d) => `failed to sign in${d['reason'] ? ` (${text(d['reason'])})` : ''}`,
  'session.signed_out': () => 'signed out',
  'session.ended': () => 'ended a session',
  'password.reset_requested': () => 'asked for a password reset',
  'password.changed': () => 'changed their password',
  'member.two_factor_enabled': () => 'turned two-factor sign-in on',
  'member.two_factor_disabled': () => 'turned two-factor sign-in off',
  'member.recovery_codes_renewed': () => 'made new recovery codes',
  'member.credentials_removed': (_t, d) => {
    const what = Array.isArray(d['removed']) ? d['removed'].map(text).filter(Boolean) : [];
    const via = d['via'] === 'sso' ? 'single sign-on' : 'a reset link';
    return `proved their e-mail address with ${via}: ${what.join(', ') || 'what was'} set up before it was verified removed`;
  },
  'account.two_factor_required': (_t, d) =>
    d['require_two_factor'] === false ? 'stopped requiring two-factor sign-in' : 'required two-factor sign-in',
  'api_key.created': (t, d) => `created ${d['type'] ? `a ${text(d['type'])} key, ` : ''}${t}`,
  'api_key.revoked': (t) => `revoked ${t}`,
  'form.created': (t, d) =>
    `created ${t}${d['copy_of'] ? ' as a copy of another form' : d['template'] ? ` from the ${text(d['template']).replace('_', ' ')} template` : ''}`,
  'form.updated': (t, d) =>
    `changed ${Array.isArray(d['changed']) && d['changed'].length ? `${d['changed'].join(', ')} of ` : ''}${t}`,
  'form.deleted': (t, d) => (d['for_good'] ? `deleted ${t} for good` : `moved ${t} to the trash`),
  'form.restored': (t) => `restored ${t} from the trash`,
  'view.saved': (t, d) => `saved the view “${text(d['name'])}” of ${t}`,
  'view.deleted': () => 'deleted a saved view',
  'account.created': (_t, d) =>
    `created the account “${text(d['name'])}”${d['method'] === 'sign-up' ? ' by signing up' : ''}`,
  'project.created': (t, d) =>
    `created ${t}${d['forms_from'] ? ` with a copy of another project’s ${plural(d['forms'], 'form')}` : ''}`,
  'project.updated': (t, d) => {
    const renamed = d['name'] ? `renamed ${t} to “${text(d['name'])}”` : '';
    if (!Array.isArray(d['changed']) || !d['changed'].includes('form_defaults')) return renamed || `renamed ${t}`;
    const defaults = `changed the form defaults of ${renamed ? 'it' : t} (${plural(d['forms'], 'form')} updated)`;
    return renamed ? `${renamed} and ${defaults}` : defaults;
  },
  'project.deleted': (_t, d) => `deleted the project “${text(d['name'])}”`,
  'webhook.created': (t) => `added ${t}`,
  'webhook.updated': (t, d) =>
    `changed ${Array.isArray(d['changed']) && d['changed'].length ? `${d['changed'].join(', ')} of ` : ''}${t}`,
  'webhook.secret_rotated': (t) => `rotated the signing secret of ${t}`,
  'webhook.deleted': (t) => `deleted ${t}`,
  'webhook.tested': (t) => `sent a test ping to ${t}`,
  'submission.deleted': (t, d) => (d['for_good'] ? `deleted ${t} for good` : `moved ${t} to the trash`),
  'submission.restored': (t) => `restored ${t} from the trash`,
  'submission.status_changed': (t, d) => `marked ${t} as ${d['status'] === 'spam' ? 'spam' : 'not spam'}`,
  'submissions.bulk_changed': (t, d) =>
    (BULK[text(d['action'])] ?? `changed {n}{of} (${text(d['action'])})`)
      .replace('{n}', plural(d['count'], 'submission'))
      .replace('{of}', t ? ` of ${t}` : ''),
  'submissions.exported': (t, d) =>
    `exported the submissions of ${t}${d['format'] ? ` as ${text(d['format']).toUpperCase()}` : ''}`,
  'deliveries.replayed': (t, d) => `replayed ${plural(d['count'], 'delivery', 'deliveries')} of ${t}`,
  'submissions.purged': (_t, d) => {
    const parts = (['retention', 'spam', 'delivered', 'trash'] as const)
      .filter((k) => Number(d[k]) > 0)
      .map(
        (k) =>
          `${text(d[k])} by ${{ retention: 'retention', spam: 'spam retention', delivered: 'delete-after-delivery', trash: 'the trash' }[k]}`,
      );
    return `removed submissions for good${parts.length ? `: ${parts.join(', ')}` : ''}`;
  },
  'data_subject.looked_up': () => 'looked up a person’s submissions',
  'data_subject.exported': (_t, d) =>
    `exported a person’s submissions${d['format'] ? ` as ${text(d['format']).toUpperCase()}` : ''}`,
  'data_subject.erased': (_t, d) => `erased a person’s ${plural(d['deleted'], 'submission')}`,
  'audit_log.exported': () => 'exported the audit log',
};

/** An action's name in words, for a filter's options: `api_key.created` is “Api key created”. */
export function actionLabel(action: string): string {
  const words = action.replace(/^operation\./, 'called ').replace(/[._]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const TARGET_WORDS: Record<string, string> = {
  form: 'the form',
  project: 'the project',
  webhook: 'the webhook',
  member: 'the member',
  api_key: 'the key',
  submission: 'a submission',
  delivery: 'a delivery',
  account: 'the account',
};

/** The target as a reader names it: its kind and its name (or id, or “since deleted”); a form with its client. */
function targetWords(target: Worded['target'], client?: string): string {
  if (!target) return '';
  const kind = TARGET_WORDS[target.type] ?? target.type;
  if (target.name) return `${kind} “${target.name}”${target.type === 'form' && client ? ` (${client})` : ''}`;
  if (target.type === 'submission' || target.type === 'delivery') return kind;
  return target.id ? `${kind} ${target.id} (since deleted)` : kind;
}

/** Who did it, in words. */
export function actorWords(actor: Worded['actor']): string {
  if (actor.type === 'operator') return 'The operator';
  if (actor.type === 'system') return actor.label === 'purge' ? 'Intake’s purge' : 'Intake';
  if (actor.type === 'api_key') return `Key “${actor.label ?? actor.id ?? 'unknown'}”`;
  return actor.label ?? actor.id ?? 'Someone';
}

/**
 * The entry as one sentence: who did what to what, and for what lies in a client's project, whose: a form is named
 * with it (`the form “Contact” (Acme Dental)`), anything else of it ends with it (`… (Acme Dental).`).
 */
export function summarise(entry: Worded): string {
  const say = SAY[entry.action as AuditAction & (typeof AUDIT_ACTIONS)[number]];
  const target = targetWords(entry.target, entry.client);
  const what = say
    ? say(target, entry.details)
    : `called ${entry.action.replace(/^operation\./, '')}${entry.target ? ` on ${target}` : ''}`;
  const named = entry.target?.type === 'form' && entry.target.name;
  return `${actorWords(entry.actor)} ${what}${entry.client && !named ? ` (${entry.client})` : ''}.`;
}
