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
