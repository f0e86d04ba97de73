import { isDeepStrictEqual } from 'node:util';
import { problem } from '@intake/shared/contracts';

/**
 * The settings a form inherits from its project unless it sets them itself (docs/decisions/projects.md, "Settings a
 * form inherits"). A project's `form_defaults` holds any of them; each is written through into the columns of its
 * forms that do not override it, so what reads a form (ingest, delivery, the purge) reads its own columns alone.
 */
export const INHERITABLE_SETTINGS = [
  'notify_emails',
  'allowed_origins',
  'mail_from_name',
  'notification_template',
  'pages',
  'spam_filter',
  'spam_rules',
  'retention_days',
  'spam_retention_days',
  'time_zone',
] as const;
export type InheritableSetting = (typeof INHERITABLE_SETTINGS)[number];

/** A project's defaults: a value for each setting it sets (null included where the form's setting takes null). */
export type FormDefaults = Partial<Record<InheritableSetting, unknown>>;

const isInheritable = (key: string): key is InheritableSetting =>
  (INHERITABLE_SETTINGS as readonly string[]).includes(key);

/** The inheritable settings among `keys`, in the list's order. */
export const inheritableOf = (keys: Iterable<string>): InheritableSetting[] => {
  const given = new Set(keys);
  return INHERITABLE_SETTINGS.filter((k) => given.has(k));
};

/** What a form inherits: the settings its project sets that the form does not override. */
export const inheritedOf = (projectSets: Iterable<string>, overridden: readonly string[]): InheritableSetting[] =>
  inheritableOf([...projectSets].filter((k) => !overridden.includes(k)));

/** The project's values of `keys` (those it sets). */
export function pickDefaults(defaults: FormDefaults, keys: readonly InheritableSetting[]): FormDefaults {
  return Object.fromEntries(keys.filter((k) => k in defaults).map((k) => [k, defaults[k]]));
}

/** The settings a change of a project's defaults writes: those it sets now with another value than before. */
export const changedDefaults = (before: FormDefaults, after: FormDefaults): InheritableSetting[] =>
  inheritableOf(Object.keys(after)).filter((k) => !(k in before) || !isDeepStrictEqual(before[k], after[k]));

/**
 * What a form overrides after a change that gives `given` settings (each becomes its own) and puts `inherit` back
 * under its project.
 */
export const overriddenAfter = (before: readonly string[], given: Iterable<string>, inherit: readonly string[]) =>
  inheritableOf([...before, ...inheritableOf(given)].filter((k) => !inherit.includes(k)));

/**
 * 422 unless each setting to inherit is one the project sets and is not also given a value in the same change (the
 * project's value of each is then `pickDefaults(defaults, inherit)`).
 */
export function checkInherit(inherit: readonly string[], given: object, defaults: FormDefaults): void {
  const errors = inherit.flatMap((key, i) => {
    const field = `body/inherit/${i}`;
    if (key in given) return [{ field, message: `cannot be inherited and given a value (${key}) at once` }];
    if (!isInheritable(key) || !(key in defaults))
      return [{ field, message: `is not set by the form’s project (${key}): there is nothing to inherit` }];
    return [];
  });
  if (errors.length > 0)
    throw problem('validation-failed', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
}
