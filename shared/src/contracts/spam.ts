import { Type, type Static } from '@sinclair/typebox';

/**
 * A form's spam filter: `off` (only the honeypot and the bot challenge), `shadow` (the rules and the
 * classifier score every post and record why, the outcome stays theirs: the owner sees what would
 * have happened) or `on` (what they catch is spam).
 */
export const SpamFilter = Type.Union([Type.Literal('off'), Type.Literal('shadow'), Type.Literal('on')], {
  description:
    '`off`: honeypot and bot challenge only; `shadow`: rules and classifier record a score and reasons, ' +
    'the outcome is unchanged; `on` (the default of a new form): what they catch is spam',
});
export type SpamFilter = Static<typeof SpamFilter>;

/** Whose classifier a form uses: its project's (default), or its own. */
export const SpamModelScope = Type.Union([Type.Literal('project'), Type.Literal('form')], {
  description:
    '`project` (default): the classifier of the form’s project, which learns from the marks and honeypot catches of ' +
    'every form of the project that uses it; `form`: one of its own, which learns from this form alone (a client’s ' +
    'test posts marked there teach no other form)',
});
export type SpamModelScope = Static<typeof SpamModelScope>;

/** A classifier: a project's (for its forms that use it) or one form's own. */
export interface SpamModelOf {
  kind: SpamModelScope;
  id: string;
}

/** The classifier a form uses: its own, or its project's. */
export function spamModelOf(form: { id: string; project_id: string; spam_model: SpamModelScope }): SpamModelOf {
  return form.spam_model === 'form' ? { kind: 'form', id: form.id } : { kind: 'project', id: form.project_id };
}

/**
 * The SQL condition (on `forms f`) of the forms whose examples train a classifier, and its binding: a project's forms
 * that use the project's, or the one form with its own.
 */
export function spamModelForms(scope: SpamModelOf): [string, string] {
  return scope.kind === 'form' ? ['f.id = ?', scope.id] : ["f.project_id = ? AND f.spam_model = 'project'", scope.id];
}

const Entry = (maxLength: number, description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength }), { maxItems: 500, uniqueItems: true, description });

/** A form's spam rules; every one optional, absent = not applied. */
export const SpamRules = Type.Object(
  {
    blocked_domains: Type.Optional(
      Entry(253, 'e-mail domains whose addresses make a post spam (`blocked-domain:<domain>`); subdomains too'),
    ),
    blocked_addresses: Type.Optional(
      Entry(320, 'e-mail addresses that make a post spam (`blocked-address:<address>`)'),
    ),
    block_disposable: Type.Optional(
      Type.Boolean({ description: 'addresses of disposable-mail providers are spam (`disposable-domain:<domain>`)' }),
    ),
    blocked_words: Type.Optional(
      Entry(200, 'words or phrases (whole words, ignoring case) that make a post spam (`blocked-word:<word>`)'),
    ),
    max_links: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1000, description: 'more links than this is spam (`too-many-links:<n>`)' }),
    ),
    required_fields: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 50,
        uniqueItems: true,
        description: 'a post without a value for one of these fields is spam (`missing-field:<name>`)',
      }),
    ),
    links_in_name: Type.Optional(
      Type.Boolean({
        description: 'a link (`http(s)://`, `www.` or an HTML link) in a name field is spam (`link-in-name:<field>`)',
      }),
    ),
    known_spam: Type.Optional(
      Type.Boolean({
        description:
          'the shipped patterns of known spam (crypto profits, earnings claims, SEO pitches, pills, casinos, prizes, ' +
          'HTML links) are spam (`known-spam:<pattern>`)',
      }),
    ),
    starting_model: Type.Optional(
      Type.Boolean({
        description:
          'until the form’s own classifier has 10 marks of each kind, the shipped starting model scores its posts ' +
          '(`starting-model:<score>` from 0.9); it only records, it never makes a post spam',
      }),
    ),
    reject_duplicates: Type.Optional(
      Type.Boolean({
        description:
          'the same fields posted again to this form within `duplicate_window_hours` are spam (`duplicate`); ' +
          'off by default (`Idempotency-Key` gives clients exactly-once)',
      }),
    ),
    duplicate_window_hours: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 720, description: 'the window of `reject_duplicates`; 24 when absent' }),
    ),
  },
  { additionalProperties: false },
);
export type SpamRules = Static<typeof SpamRules>;

export const DEFAULT_DUPLICATE_WINDOW_HOURS = 24;

/**
 * The spam rules a new form starts with (the column's default since migration 041; a form made before keeps its own):
 * the certain rules on, the starting model recording (docs/decisions/spam.md, "Defaults").
 */
export const DEFAULT_SPAM_RULES = {
  block_disposable: true,
  links_in_name: true,
  known_spam: true,
  starting_model: true,
} as const satisfies SpamRules;
