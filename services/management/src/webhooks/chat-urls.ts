import { type Db, type SecretBox } from '@intake/shared/base';
import { isChatFormat, shownChatUrl, type WebhookFormat } from '@intake/shared/webhooks';
import { chatWebhooksInTheClear, sealChatUrl, type WebhookRow } from './webhook.repository';

/**
 * A chat webhook's URL (Slack, Discord, Teams) is its credential: whoever has it posts to the channel. It is stored
 * as an integration's credential is, sealed with SECRETS_KEY in `credential`, and `url` keeps only what may be shown
 * (shownChatUrl: scheme, host, `…` and four characters). A standard webhook's URL stays in `url` as it is.
 */
export function storedUrl(
  format: WebhookFormat,
  url: string,
  secrets: SecretBox,
): { url: string; credential: string | null } {
  return isChatFormat(format) ? { url: shownChatUrl(url), credential: secrets.seal(url) } : { url, credential: null };
}

/** A webhook's URL as every answer shows it: a chat webhook's never whole, even before its URL is sealed. */
export function shownUrl(row: Pick<WebhookRow, 'format' | 'url' | 'credential'>): string {
  return isChatFormat(row.format) && !row.credential ? shownChatUrl(row.url) : row.url;
}

/** Where a webhook sends: a chat webhook's sealed URL opened (one stored before sealing: its `url`). */
export function fullUrl(row: Pick<WebhookRow, 'format' | 'url' | 'credential'>, secrets: SecretBox): string {
  return isChatFormat(row.format) && row.credential ? secrets.open(row.credential) : row.url;
}

/**
 * Seals the chat webhook URLs still stored in the clear (written before they were sealed, or by an older process
 * during a rolling upgrade); returns how many. The management process runs it at start and every 10 minutes.
 */
export async function sealChatUrlsInTheClear(db: Db, secrets: SecretBox): Promise<number> {
  const rows = await chatWebhooksInTheClear(db);
  for (const row of rows) await sealChatUrl(db, row.id, row.url, storedUrl(row.format, row.url, secrets));
  return rows.length;
}
