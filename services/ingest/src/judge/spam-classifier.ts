import naiveBayes from 'wink-naive-bayes-text-classifier';
import { LRUCache } from 'lru-cache';
import { type Db } from '@intake/shared/base';
import { spamModelOf, type SpamModelOf } from '@intake/shared/contracts';
import type { IngestForm } from '../read/form.repository';
import { findSpamExamples } from './spam.repository';

/** An account's classifier, trained on its examples; `score` is the probability (0–1) that a post is spam. */
export interface SpamModel {
  spamExamples: number;
  hamExamples: number;
  /** Whether it has enough examples of both kinds to decide (`on`); below that it only records (shadow). */
  ready: boolean;
  /** null when no token of the post was ever seen in training. */
  score(tokens: string[]): number | null;
}

/** Examples of each kind before the classifier's verdict counts (it records its score from the first of each). */
export const MIN_EXAMPLES = 10;
/** The score from which a post is spam (`classifier:<score>`); see docs/spam.md for how it was chosen. */
export const SPAM_THRESHOLD = 0.9;

const SPAM = 'spam';
const HAM = 'ham';

/**
 * Trains a naive Bayes classifier (wink-naive-bayes-text-classifier: token presence, not counts,
 * as form posts are short; half-Laplace smoothing) on the posts' tokens (`postFeatures`). Undefined
 * when there is nothing to learn from: no example of one kind, or fewer than 10 distinct tokens.
 * The learned model is then turned into one weight per token (`weightsOf`), so scoring a post is a
 * lookup and an addition per token instead of the library's logarithms over every label.
 */
export function trainModel(
  examples: Iterable<{ payload: Record<string, string>; spam: boolean }>,
): SpamModel | undefined {
  const nb = learn(examples);
  return nb ? modelOf(weightsOf(nb)) : undefined;
}

/** A model's prior and one log2-odds weight per token (`weightsOf`), with the examples it learned from. */
export interface ModelWeights {
  prior: number;
  weights: Map<string, number>;
  spamExamples: number;
  hamExamples: number;
}

/** The classifier of a model's weights: the prior plus the weight of each known token, as a probability. */
export function modelOf(props: ModelWeights): SpamModel {
  const { prior, weights, spamExamples, hamExamples } = props;
  return {
    spamExamples,
    hamExamples,
    ready: spamExamples >= MIN_EXAMPLES && hamExamples >= MIN_EXAMPLES,
    score(tokens) {
      let odds = prior;
      let known = false;
      // Presence: each token once, as in training.
      for (const token of new Set(tokens)) {
        const weight = weights.get(token);
        if (weight !== undefined) {
          odds += weight;
          known = true;
        }
      }
      return known ? roundScore(1 / (1 + Math.pow(2, -odds))) : null;
    },
  };
}

/** The library's classifier, trained and consolidated; undefined when it cannot be (one kind only, too few tokens). */
export function learn(
  examples: Iterable<{ payload: Record<string, string>; spam: boolean }>,
): ReturnType<typeof naiveBayes> | undefined {
  const nb = naiveBayes();
  nb.defineConfig({ considerOnlyPresence: true, smoothingFactor: SMOOTHING });
  const kinds = new Set<boolean>();
  for (const example of examples) {
    nb.learn(postFeatures(example.payload).tokens, example.spam ? SPAM : HAM);
    kinds.add(example.spam);
  }
  if (kinds.size < 2) return undefined;
  try {
    nb.consolidate();
  } catch {
    return undefined; // a vocabulary too small to learn from
  }
  return nb;
}

const SMOOTHING = 0.5;

/**
 * The library's log2 odds of spam for a post, `log2 P(spam) - log2 P(ham) + Σ over its known tokens
 * of log2 P(token | spam) - log2 P(token | ham)` (smoothed as configured), split into the prior and
 * one term per token of the vocabulary, read from its exported counts. The test beside it checks
 * that the sum equals the library's own `computeOdds`.
 */
export function weightsOf(nb: ReturnType<typeof naiveBayes>): ModelWeights {
  const [, samples, count, words, vocabulary] = JSON.parse(nb.exportJSON()) as [
    unknown,
    Record<string, number>,
    Record<string, Record<string, number>>,
    Record<string, number>,
    string[],
  ];
  const spamExamples = samples[SPAM] ?? 0;
  const hamExamples = samples[HAM] ?? 0;
  const v = vocabulary.length * SMOOTHING;
  const spamTotal = Math.log2((words[SPAM] ?? 0) + v);
  const hamTotal = Math.log2((words[HAM] ?? 0) + v);
  const weights = new Map<string, number>();
  for (const token of vocabulary) {
    const inSpam = Math.log2((count[SPAM]?.[token] ?? 0) + SMOOTHING) - spamTotal;
    const inHam = Math.log2((count[HAM]?.[token] ?? 0) + SMOOTHING) - hamTotal;
    weights.set(token, inSpam - inHam);
  }
  return { prior: Math.log2(spamExamples) - Math.log2(hamExamples), weights, spamExamples, hamExamples };
}

/** Two decimals, as the reasons show it (`classifier:0.97`). */
export function roundScore(p: number): number {
  return Math.round(p * 100) / 100;
}

/**
 * What the spam filter reads in a post's fields: the e-mail addresses (a field whose whole value is
 * one address), the links, and the tokens the classifier learns from. Computed once per post and
 * shared by the rules and the classifier.
 */
export interface PostFeatures {
  /** Addresses in lower case, from the fields whose value is one address. */
  addresses: string[];
  /** Links (`http(s)://…` or `www.…`) over every value. */
  links: number;
  tokens: string[];
}

const ADDRESS = /^[^\s@<>",;]+@([^\s@<>",;]+\.[^\s@<>",;]+)$/;
const LINK = /\b(?:https?:\/\/|www\.)([^\s/?#<>"'()]+)/gi;
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;
/** Enough of a post to judge it; a long text repeats itself for a classifier. */
const MAX_TOKENS = 1000;
const MAX_SCANNED_CHARS = 20_000;

/**
 * The classifier's tokens: every field's name (`f:`), the words of its value (lower case, 2 to 40
 * characters), the domain of an address (`d:`), the host of a link (`h:`), and the number of links
 * (`links:0` … `links:5`, 5 meaning five or more).
 */
export function postFeatures(payload: Record<string, string>): PostFeatures {
  const addresses: string[] = [];
  const tokens: string[] = [];
  let links = 0;
  for (const name in payload) {
    const value = payload[name] as string;
    tokens.push(`f:${name.toLowerCase()}`);
    const trimmed = value.trim();
    const address = trimmed.length <= 320 ? ADDRESS.exec(trimmed) : null;
    if (address) {
      addresses.push(trimmed.toLowerCase());
      tokens.push(`d:${(address[1] as string).toLowerCase()}`);
      continue;
    }
    const text = value.length > MAX_SCANNED_CHARS ? value.slice(0, MAX_SCANNED_CHARS) : value;
    for (const link of text.matchAll(LINK)) {
      links++;
      if (tokens.length < MAX_TOKENS) tokens.push(`h:${(link[1] as string).toLowerCase()}`);
    }
    for (const word of text.matchAll(WORD)) {
      if (tokens.length >= MAX_TOKENS) break;
      const w = word[0];
      if (w.length >= 2 && w.length <= 40) tokens.push(w.toLowerCase());
    }
  }
  tokens.push(`links:${Math.min(links, 5)}`);
  return { addresses, links, tokens };
}

/** The domain of a lower-case address. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1);
}

// The models, per process: trained once per project or form, kept until their examples change.

export interface SpamModels {
  /**
   * The classifier the form uses, its project's or its own (undefined: not enough to learn from), trained once and kept
   * until its examples change.
   */
  get(form: Pick<IngestForm, 'id' | 'account_id' | 'project_id' | 'spam_model'>): Promise<SpamModel | undefined>;
  /** Drops the account's models (its owner marked a post, or moved a form): the next post trains them again. */
  forget(accountId: string): void;
  /** Drops every model (after a NATS reconnection, when notices may have been missed). */
  clear(): void;
}

const LIMITS = { marksPerKind: 2000, honeypotCatches: 500, ttlMs: 10 * 60_000, maxAccounts: 10_000 };

/**
 * Per process, per project or form with its own (the 10,000 most recently used, lru-cache): a model is trained from
 * its forms' examples the first time one of their posts is scored, then kept. Management announces every mark (a form-change notice with the
 * account), and every process drops that model at once; otherwise a model is trained again after
 * 10 minutes, which takes in the honeypot catches since. A training that was under way when a
 * notice came is used by the posts waiting for it but not kept (the notice removed its entry).
 */
export function createSpamModels(props: { db: Db }): SpamModels {
  const entries = new LRUCache<string, Promise<SpamModel | undefined>>({
    max: LIMITS.maxAccounts,
    ttl: LIMITS.ttlMs,
  });
  return {
    get(form) {
      const scope = spamModelOf(form);
      const key = `${form.account_id} ${scope.kind} ${scope.id}`;
      const hit = entries.get(key);
      if (hit) return hit;
      const model = loadModel(props.db, form.account_id, scope);
      entries.set(key, model);
      // A failed read is not kept: the next post tries again.
      model.catch(() => {
        if (entries.peek(key) === model) entries.delete(key);
      });
      return model;
    },
    forget(accountId) {
      // Marks are rare next to posts: a walk over the cached models is cheap enough for each.
      for (const key of [...entries.keys()]) if (key.startsWith(`${accountId} `)) entries.delete(key);
    },
    clear() {
      entries.clear();
    },
  };
}

async function loadModel(db: Db, accountId: string, scope: SpamModelOf): Promise<SpamModel | undefined> {
  const rows = await findSpamExamples(db, {
    accountId,
    scope,
    marksPerKind: LIMITS.marksPerKind,
    honeypotCatches: LIMITS.honeypotCatches,
  });
  return trainModel(rows.map((r) => ({ payload: r.payload, spam: r.is_spam })));
}
