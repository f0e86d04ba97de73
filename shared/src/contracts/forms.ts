import { Type, type Static } from '@sinclair/typebox';

/** A form accepts posts only when `live`. */
export const FormStatus = Type.Union([Type.Literal('live'), Type.Literal('paused'), Type.Literal('draft')]);
export type FormStatus = Static<typeof FormStatus>;

/** The bot-challenge providers a form may use (they share one siteverify protocol). */
export const ChallengeProvider = Type.Union([
  Type.Literal('turnstile'),
  Type.Literal('hcaptcha'),
  Type.Literal('recaptcha'),
]);
export type ChallengeProvider = Static<typeof ChallengeProvider>;
