/**
 * Integrations: webhooks that write each submission into a tool the owner already uses, through that tool's API,
 * with a credential of the owner's (migration 037). They share the deliveries, retries, log, health and replay of
 * every webhook; the delivery service makes their attempts (services/delivery/src/integrations).
 */
export const INTEGRATION_FORMATS = ['google_sheets', 'airtable', 'notion'] as const;
export type IntegrationFormat = (typeof INTEGRATION_FORMATS)[number];

export function isIntegration(format: string): format is IntegrationFormat {
  return (INTEGRATION_FORMATS as readonly string[]).includes(format);
}

/** A Google Sheets destination: the spreadsheet, the sheet (tab) rows go to, the service account that writes. */
export interface SheetsDestination {
  spreadsheet_id: string;
  sheet: string;
  /** Not secret: the address the owner shares the spreadsheet with. */
  client_email: string;
}

/** An Airtable destination: the base, and the table by id (`tbl…`) or name. */
export interface AirtableDestination {
  base_id: string;
  table: string;
}

/** A Notion destination: the database pages are created in. */
export interface NotionDestination {
  database_id: string;
}

/** Where an integration writes, as stored in `webhooks.destination` and shown to the owner: never a credential. */
export type Destination = SheetsDestination | AirtableDestination | NotionDestination;

/** A Google service account's key, as sealed in `webhooks.credential` (the fields its JSON file has that we use). */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/** The longest wait a receiver's `Retry-After` may ask for; a longer one is held to this. */
const RETRY_AFTER_MAX_MS = 3_600_000;

/**
 * What a `Retry-After` header asks for, in milliseconds from `now` (RFC 9110: seconds, or an HTTP date), at most
 * RETRY_AFTER_MAX_MS; undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | string[] | null | undefined, now: Date): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now.getTime();
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), RETRY_AFTER_MAX_MS);
}
