/** Turnstile, hCaptcha and reCAPTCHA share one siteverify protocol: a form-encoded POST of secret, response, remoteip answered with `{ success }`. */
export const SITEVERIFY_URLS = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
  recaptcha: 'https://www.google.com/recaptcha/api/siteverify',
} as const;

export type ChallengeProvider = keyof typeof SITEVERIFY_URLS;

/** `passed` / `failed`, or `unavailable` when the provider could not give an answer (network error, time-out, non-2xx, not JSON). */
export type ChallengeVerdict = 'passed' | 'failed' | 'unavailable';

export const SITEVERIFY_TIMEOUT_MS = 5000;

export async function verifyChallenge(props: {
  provider: ChallengeProvider;
  secret: string;
  token: string | undefined;
  remoteIp: string;
  verifyUrl?: string;
  timeoutMs?: number;
}): Promise<ChallengeVerdict> {
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
