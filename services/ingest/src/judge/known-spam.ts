/**
 * The shipped patterns of known spam (`spam_rules.known_spam`, on for new forms): each one a kind of spam a form gets
 * that a person writing to a business does not write. Each matched none of the made-up real form posts of
 * test/fixtures/form-posts.json and at most one in a thousand of the SpamAssassin corpus's 4,150 real mails, which
 * are mailing lists that discuss spam (docs/spam.md, "Defaults"); a pattern that matches more is not certain enough to
 * ship. The reason names the pattern (`known-spam:seo-pitch`).
 */
export const KNOWN_SPAM: ReadonlyArray<readonly [name: string, pattern: RegExp]> = [
  [
    'crypto-profit',
    /\b(?:bitcoin|btc|crypto(?:currency)?|forex)\b[^.!?\n]{0,40}?\b(?:trading|investments?|profits?|returns?)\b|\b(?:double|invest in)\b[^.!?\n]{0,20}?\b(?:bitcoin|btc|crypto(?:currency)?)\b/i,
  ],
  [
    'earnings-claim',
    /\b(?:earn|make)\s+(?:up to\s+)?\$\s?\d[\d,.]*k?\s*(?:\/\s*|per\s+|a\s+|an\s+|every\s+)(?:hour|day|week|month)\b/i,
  ],
  [
    'seo-pitch',
    /\b(?:first page (?:of|on) google|seo (?:services|experts?|agency|specialists?)|(?:high quality|high authority|dofollow)\s+backlinks?)\b/i,
  ],
  ['pills', /\b(?:buy|cheap|order|discount)\b[^.!?\n]{0,30}?\b(?:viagra|cialis|levitra)\b/i],
  ['casino', /\b(?:online casino|free spins)\b/i],
  ['prize', /\b(?:you(?:'ve| have) won|claim your (?:prize|reward))\b/i],
  ['make-money', /\bmake money (?:fast|online|from home)\b/i],
  ['html-link', /<a\s[^>]*href\s*=/i],
];

/** The first known pattern a post's values match, by name; undefined: none. Values are read up to `maxChars`. */
export function knownSpamIn(payload: Record<string, string>, maxChars: number): string | undefined {
  for (const [name, pattern] of KNOWN_SPAM)
    for (const field in payload) {
      const value = payload[field] as string;
      if (pattern.test(value.length > maxChars ? value.slice(0, maxChars) : value)) return name;
    }
  return undefined;
}
