import { createHmac, randomBytes } from 'node:crypto';

/** A new webhook signing secret: `whsec_` + base64 of 32 random bytes (shown to the owner once). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `x-service-signature`: `sha256=` + hex HMAC-SHA256 of the raw body, keyed with the whole `whsec_...` string. */
export function serviceSignature(secret: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`;
}

/**
 * Standard Webhooks `webhook-signature`: `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`,
 * keyed with the base64-decoded part of the secret after `whsec_`.
 */
export function standardSignature(secret: string, id: string, timestampSeconds: number, rawBody: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${rawBody}`, 'utf8').digest('base64')}`;
}
