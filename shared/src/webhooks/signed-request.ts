import { createHmac, randomBytes } from 'node:crypto';
import { toTimestamp } from '../contracts/time';
import { chatBody, isChatFormat, type WebhookFormat } from './chat';

/*
 * What an attempt sends and how it is signed: the delivery service's attempts (services/delivery/src/send/attempt.ts)
 * and management's signed sample both build it here, and management makes the secrets it is signed with.
 */

export const USER_AGENT = 'Service-Webhooks/1';
/** What a chat-format webhook (Slack, Discord, Teams) is posted with: none of the envelope's `x-service-*` headers. */
export const CHAT_USER_AGENT = 'Intake-Chat/1';

export type EventType = 'submission.created' | 'webhook.test';

export interface Envelope {
  type: EventType;
  id: string;
  created_at: string;
  data: Record<string, unknown>;
}

/**
 * How a chat-format webhook words its message: the form's name and where the console is. A webhook
 * without it (or of format `standard`) posts the signed envelope.
 */
export interface ChatTarget {
  format: WebhookFormat;
  formName: string;
  baseUrl: string;
}

/** What one attempt says and how it is signed. */
export interface SignedRequestProps {
  type: EventType;
  deliveryId: string;
  data: Record<string, unknown>;
  attempt: number;
  secret: string;
  now: Date;
  chat?: ChatTarget;
}

/**
 * The exact bytes and headers of one attempt: the envelope gets a fresh `created_at`, both signatures
 * cover the raw body. A chat format posts its service's message instead of the envelope, unsigned and
 * without the envelope's headers (`x-service-*`, `webhook-*`: the chat service reads none of them, and
 * its URL is the credential), so every format still shares the log, retries and replay.
 */
export function signedRequest(props: SignedRequestProps): { body: string; headers: Record<string, string> } {
  const chat = props.chat;
  if (chat && isChatFormat(chat.format)) {
    const message = chatBody(chat.format, {
      type: props.type,
      data: props.data,
      formName: chat.formName,
      baseUrl: chat.baseUrl,
    });
    return {
      body: JSON.stringify(message),
      headers: { 'content-type': 'application/json', 'user-agent': CHAT_USER_AGENT },
    };
  }
  const envelope: Envelope = {
    type: props.type,
    id: props.deliveryId,
    created_at: toTimestamp(props.now),
    data: props.data,
  };
  const body = JSON.stringify(envelope);
  const timestamp = Math.floor(props.now.getTime() / 1000);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-service-event': props.type,
      'x-service-delivery': props.deliveryId,
      'x-service-attempt': String(props.attempt),
      'x-service-signature': serviceSignature(props.secret, body),
      'webhook-id': props.deliveryId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardSignature(props.secret, props.deliveryId, timestamp, body),
    },
  };
}

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
