/** Bounds on what one post may carry (documented in docs/decisions/ingest.md#bodies-and-limits). */
export const LIMITS = {
  /** Bytes of a urlencoded or JSON body, and of the non-file fields of a multipart body. */
  bodyBytes: 1024 * 1024,
  /** Fields in one submission. */
  fields: 1000,
  /** Characters of one field name. */
  fieldNameChars: 200,
  /** Files in one submission. */
  files: 10,
  /** Nesting of a JSON body (the top-level object is depth 1). */
  jsonDepth: 32,
  /** Characters of an Idempotency-Key. */
  idempotencyKeyChars: 255,
  /** How long an idempotency key is remembered. */
  idempotencyMs: 24 * 3600 * 1000,
} as const;

/** The field carrying the bot-challenge token (stripped from the stored payload). */
export const CHALLENGE_FIELD = 'bot-challenge-response';

/**
 * The fields the providers' own widgets add to a form (Turnstile, hCaptcha, reCAPTCHA): read as the token when
 * `bot-challenge-response` is absent, and stripped from the payload like it, so a form with the widget just works.
 */
export const PROVIDER_CHALLENGE_FIELDS = ['cf-turnstile-response', 'h-captcha-response', 'g-recaptcha-response'];
