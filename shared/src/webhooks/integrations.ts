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
