import MailChecker from 'mailchecker';
import { createHash } from 'node:crypto';
import { type Db } from '@intake/shared/base';
import { DEFAULT_DUPLICATE_WINDOW_HOURS, type SpamRules } from '@intake/shared/contracts';
import type { IngestForm } from '../read/form.repository';
import { postSeenWithin } from './spam.repository';
import { domainOf, postFeatures, SPAM_THRESHOLD, type PostFeatures, type SpamModels } from './spam-classifier';
import { knownSpamIn } from './known-spam';
import { STARTING_MODEL } from './starting-model';

/** What the spam filter makes of a post: the reason that makes it spam (only when `on`), its score and every reason found. */
export interface FilterVerdict {
  spam: string | undefined;
  score: number | null;
  reasons: string[];
  /** Stored on forms that refuse duplicates, for the next posts to compare with. */
  payloadHash?: string;
}

const NOTHING: FilterVerdict = { spam: undefined, score: null, reasons: [] };

/**
 * The rules, the duplicate check and the account's classifier, on a post the honeypot and the bot
 * challenge let through. Everything it finds is recorded; only a form whose filter is `on` makes a
 * post spam by it, and the classifier only once it has enough examples of both kinds (`ready`).
 * Costs a lookup in the cached model and a pass over the fields; the database only when the form
 * refuses duplicates or its account's model is being trained.
 */
export async function filterPost(
  deps: { db: Db; spamModels: SpamModels },
  post: { form: IngestForm; payload: Record<string, string>; now: Date },
): Promise<FilterVerdict> {
  const { form, payload } = post;
  if (form.spam_filter === 'off') return NOTHING;
  const features = postFeatures(payload);
  const rules = compiledRules(form.spam_rules);
  const reasons = rules.check(payload, features);
  let hash: string | undefined;
  if (rules.duplicateWindowMs !== undefined) {
    hash = payloadHash(payload);
    if (await postSeenWithin(deps.db, form.id, hash, new Date(post.now.getTime() - rules.duplicateWindowMs)))
      reasons.push('duplicate');
  }
  const byRule = reasons[0];
  const own = await deps.spamModels.get(form);
  // The starting model stands in until the form's own classifier is ready, and only records (starting-model.ts).
  const starting = form.spam_rules.starting_model === true && !own?.ready;
  const model = starting ? STARTING_MODEL : own;
  const score = model ? model.score(features.tokens) : null;
  const caught = score !== null && score >= SPAM_THRESHOLD;
  if (caught) reasons.push(`${starting ? 'starting-model' : 'classifier'}:${score.toFixed(2)}`);
  let spam: string | undefined;
  if (form.spam_filter === 'on')
    spam = byRule ?? (caught && !starting && model?.ready ? reasons[reasons.length - 1] : undefined);
  return { spam, score, reasons, payloadHash: hash };
}

/** A form's rules, ready to apply: made once per form row ingest reads (`compiledRules`), not per post. */
export interface CompiledRules {
  /** The reasons the rules find in a post (duplicates aside), in a fixed order; empty: none. */
  check(payload: Record<string, string>, features: PostFeatures): string[];
  /** The window of the duplicate rule, when the form has it. */
  duplicateWindowMs: number | undefined;
}

const compiled = new WeakMap<SpamRules, CompiledRules>();

/** The form's compiled rules; the form cache hands out one rules object per read, so this compiles once per read. */
export function compiledRules(rules: SpamRules): CompiledRules {
  let hit = compiled.get(rules);
  if (!hit) {
    hit = compileRules(rules);
    compiled.set(rules, hit);
  }
  return hit;
}

function compileRules(rules: SpamRules): CompiledRules {
  const domains = new Set((rules.blocked_domains ?? []).map((d) => d.toLowerCase().replace(/^@/, '')));
  const addresses = new Set((rules.blocked_addresses ?? []).map((a) => a.toLowerCase()));
  const words = blockedWords(rules.blocked_words ?? []);
  const required = rules.required_fields ?? [];
  const { max_links: maxLinks, block_disposable: disposable } = rules;
  return {
    duplicateWindowMs: rules.reject_duplicates
      ? (rules.duplicate_window_hours ?? DEFAULT_DUPLICATE_WINDOW_HOURS) * 3_600_000
      : undefined,
    check(payload, features) {
      const reasons: string[] = [];
      for (const address of features.addresses) {
        if (addresses.has(address)) reasons.push(`blocked-address:${address}`);
        const domain = domainOf(address);
        const blocked = domains.size > 0 ? listedDomain(domains, domain) : undefined;
        if (blocked) reasons.push(`blocked-domain:${blocked}`);
        const throwaway = disposable ? listedDomain(MailChecker.blacklist(), domain) : undefined;
        if (throwaway) reasons.push(`disposable-domain:${throwaway}`);
      }
      if (words) {
        for (const name in payload) {
          const found = words.exec(payload[name] as string);
          if (found) {
            reasons.push(`blocked-word:${found[0].toLowerCase().replace(/\s+/g, ' ')}`);
            break;
          }
        }
      }
      if (rules.known_spam) {
        const known = knownSpamIn(payload, MAX_SCANNED_CHARS);
        if (known) reasons.push(`known-spam:${known}`);
      }
      if (rules.links_in_name) {
        const field = linkInName(payload);
        if (field !== undefined) reasons.push(`link-in-name:${field}`);
      }
      if (maxLinks !== undefined && features.links > maxLinks) reasons.push(`too-many-links:${features.links}`);
      for (const name of required)
        if (!Object.hasOwn(payload, name) || (payload[name] as string).trim() === '')
          reasons.push(`missing-field:${name}`);
      return reasons;
    },
  };
}

/** A field that holds a person's name (`name`, `first_name`, `Your Name`), not a company's, a file's or a login's. */
const NAME_FIELD = /name/i;
const NOT_A_PERSON = /company|business|organi[sz]ation|domain|user|file|site|web|url|link/i;
const LINK_IN_TEXT = /\b(?:https?:\/\/|www\.)\S|<a\s/i;
const MAX_SCANNED_CHARS = 20_000;

/** The first name field (by NAME_FIELD) whose value holds a link, or undefined. */
function linkInName(payload: Record<string, string>): string | undefined {
  for (const name in payload)
    if (
      NAME_FIELD.test(name) &&
      !NOT_A_PERSON.test(name) &&
      LINK_IN_TEXT.test((payload[name] as string).slice(0, 2000))
    )
      return name;
  return undefined;
}

/** The domain or the parent domain of it that the set lists (`mail.spam.example` is caught by `spam.example`). */
function listedDomain(domains: Set<string>, domain: string): string | undefined {
  for (let d = domain; d;) {
    if (domains.has(d)) return d;
    const dot = d.indexOf('.');
    d = dot === -1 ? '' : d.slice(dot + 1);
  }
  return undefined;
}

/** One expression for every blocked word or phrase: whole words only, ignoring case, any run of spaces between words. */
function blockedWords(words: string[]): RegExp | undefined {
  const parts = words
    .map((w) => w.trim())
    .filter((w) => w !== '')
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+'));
  if (parts.length === 0) return undefined;
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${parts.join('|')})(?![\\p{L}\\p{N}])`, 'iu');
}

/** The hash the duplicate rule compares: the fields' names and values in their posted order. */
export function payloadHash(payload: Record<string, string>): string {
  return createHash('sha256').update(JSON.stringify(payload)).digest('base64url');
}
