import { problem, type ChallengeProvider } from '@intake/shared/contracts';
import type { Fields } from '../read/fields';

/** The spam reason of a post kept because the bot-challenge provider could not answer (its files are kept). */
export const CHALLENGE_UNAVAILABLE = 'challenge-unavailable';

/**
 * The ONE honeypot rule, for the multipart parser (which stops storing files once it holds) and
 * for the verdict: the post is spam when ANY value of the honeypot field is not blank.
 */
export function honeypotFilled(fields: Fields, honeypotField: string): boolean {
  return fields.some(([name, value]) => name === honeypotField && value.trim() !== '');
}

/**
 * The spam verdict of a post, decided once: a filled honeypot is spam (no provider call); else a
 * form with a bot challenge asks its provider: `failed` refuses the post (challenge-failed), an
 * unavailable provider keeps it, out of the way, as spam (`challenge-unavailable`, see
 * docs/decisions/ingest.md#honeypot-and-bot-challenge). Returns the spam reason, or undefined for a genuine post.
 */
export async function spamVerdict(props: {
  fields: Fields;
  honeypotField: string;
  /** The form's bot challenge with this post's token, when the form has one. */
  challenge: ChallengeCheck | undefined;
}): Promise<string | undefined> {
  if (honeypotFilled(props.fields, props.honeypotField)) return 'honeypot';
  if (!props.challenge) return undefined;
  const verdict = await verifyChallenge(props.challenge);
  if (verdict === 'failed')
    throw problem('challenge-failed', 'The bot challenge token is missing or was not accepted by the provider');
  return verdict === 'unavailable' ? CHALLENGE_UNAVAILABLE : undefined;
}

/**
 * Turnstile, hCaptcha and reCAPTCHA share one siteverify protocol: a form-encoded POST of secret, response, remoteip
 * answered with `{ success }`.
 */
export const SITEVERIFY_URLS: Record<ChallengeProvider, string> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
  recaptcha: 'https://www.google.com/recaptcha/api/siteverify',
};

/** `passed` / `failed`, or `unavailable` when the provider could not give an answer (network error, time-out, non-2xx, not JSON). */
export type ChallengeVerdict = 'passed' | 'failed' | 'unavailable';

export const SITEVERIFY_TIMEOUT_MS = 5000;

export interface ChallengeCheck {
  provider: ChallengeProvider;
  secret: string;
  token: string | undefined;
  remoteIp: string;
  verifyUrl?: string;
  timeoutMs?: number;
}

export async function verifyChallenge(props: ChallengeCheck): Promise<ChallengeVerdict> {
  if (!props.token || props.token.length > 4096) return 'failed';
  const body = new URLSearchParams({ secret: props.secret, response: props.token, remoteip: props.remoteIp });
  try {
    const res = await fetch(props.verifyUrl ?? SITEVERIFY_URLS[props.provider], {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(props.timeoutMs ?? SITEVERIFY_TIMEOUT_MS),
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return 'unavailable';
    }
    const answer = (await res.json()) as { success?: unknown };
    return answer.success === true ? 'passed' : 'failed';
  } catch {
    return 'unavailable';
  }
}
