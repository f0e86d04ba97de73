import { createPrivateKey } from 'node:crypto';
import { problem } from '@intake/shared/contracts';
import {
  type Destination,
  type IntegrationFormat,
  type ServiceAccountKey,
  type AirtableDestination,
  type NotionDestination,
  type SheetsDestination,
} from '@intake/shared/webhooks';

/** What an owner sends to connect an integration (`destination` of the webhook's body); credentials included. */
export interface DestinationInput {
  spreadsheet_id?: string;
  sheet?: string;
  service_account_key?: string;
  base_id?: string;
  table?: string;
  token?: string;
  database_id?: string;
}

/** An integration's settings, checked: where it writes (shown), its credential (sealed, never shown), its page. */
export interface IntegrationSettings {
  destination: Destination;
  credential: string;
  url: string;
}

/** What each format takes in `destination`; the credential's field last. */
const FIELDS: Record<IntegrationFormat, (keyof DestinationInput)[]> = {
  google_sheets: ['spreadsheet_id', 'sheet', 'service_account_key'],
  airtable: ['base_id', 'table', 'token'],
  notion: ['database_id', 'token'],
};

type Errors = { field: string; message: string }[];

function refuse(errors: Errors): never {
  const first = errors[0] ?? { field: 'body/destination', message: 'is incomplete' };
  throw problem('validation-failed', `${first.field} ${first.message}`, { errors });
}

/** A spreadsheet's id, or the id in its address (`…/spreadsheets/d/<id>/…`). */
function spreadsheetId(input: string): string | undefined {
  const id = /\/spreadsheets\/d\/([A-Za-z0-9_-]+)/.exec(input)?.[1] ?? input.trim();
  return /^[A-Za-z0-9_-]{20,100}$/.test(id) ? id : undefined;
}

/** A Notion database's id (32 hex digits, dashed or not), or the id in its address; dashed as Notion writes it. */
function notionId(input: string): string | undefined {
  const hex = /([0-9a-f]{32})(?:[?#/]|$)/i.exec(input.replace(/-/g, ''))?.[1]?.toLowerCase();
  return hex && `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A service account's key file (the JSON Google gives), reduced to what signing in needs; its errors never quote it. */
function serviceAccountKey(text: string, errors: Errors): ServiceAccountKey | undefined {
  const field = 'body/destination/service_account_key';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    errors.push({ field, message: 'is not JSON: paste the whole key file Google gave you' });
    return undefined;
  }
  const key = parsed as Partial<Record<string, unknown>>;
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    key['type'] !== 'service_account' ||
    typeof key['client_email'] !== 'string' ||
    !/^[^\s@]+@[^\s@]+$/.test(key['client_email']) ||
    typeof key['private_key'] !== 'string'
  ) {
    errors.push({ field, message: 'is not a service account key (type, client_email and private_key are needed)' });
    return undefined;
  }
  try {
    createPrivateKey(key['private_key']);
  } catch {
    errors.push({ field, message: 'holds a private_key that is not a readable PEM key' });
    return undefined;
  }
  return {
    client_email: key['client_email'],
    private_key: key['private_key'],
    ...(typeof key['private_key_id'] === 'string' ? { private_key_id: key['private_key_id'] } : {}),
  };
}

/** An API token: one word of printable characters. */
const tokenOk = (token: string) => /^[\x21-\x7e]{10,500}$/.test(token);

/**
 * Checks an integration's `destination` (422 naming each wrong field, never quoting a credential). On a change,
 * `current` fills what the body leaves out (a credential left out is kept).
 */
export function integrationSettings(
  format: IntegrationFormat,
  input: DestinationInput,
  current?: { destination: Destination; credential: string },
): IntegrationSettings {
  const errors: Errors = [];
  const at = (name: string) => `body/destination/${name}`;
  const stray = Object.keys(input).filter((k) => !FIELDS[format].includes(k as keyof DestinationInput));
  for (const k of stray) errors.push({ field: at(k), message: `is not a setting of ${format}` });
  const was = (current?.destination ?? {}) as Partial<Record<string, string>>;
  const value = (name: keyof DestinationInput) => input[name] ?? was[name];
  const missing = (name: keyof DestinationInput) => errors.push({ field: at(name), message: 'is required' });
  let destination: Destination | undefined;
  let credential = current?.credential;
  if (format === 'google_sheets') {
    const id = value('spreadsheet_id');
    const sheet = value('sheet') ?? 'Sheet1';
    if (id === undefined) missing('spreadsheet_id');
    else if (!spreadsheetId(id))
      errors.push({ field: at('spreadsheet_id'), message: 'is not a spreadsheet id or a spreadsheet’s address' });
    if (sheet.trim() === '' || sheet.length > 100)
      errors.push({ field: at('sheet'), message: 'must be a sheet’s name of 1 to 100 characters' });
    let email = was['client_email'];
    if (input.service_account_key !== undefined) {
      const key = serviceAccountKey(input.service_account_key, errors);
      if (key) [credential, email] = [JSON.stringify(key), key.client_email];
    } else if (!credential) missing('service_account_key');
    if (id && email) destination = { spreadsheet_id: spreadsheetId(id) ?? id, sheet, client_email: email };
  } else if (format === 'airtable') {
    const base = value('base_id');
    const table = value('table');
    if (base === undefined) missing('base_id');
    else if (!/^app[A-Za-z0-9]{14}$/.test(base))
      errors.push({ field: at('base_id'), message: 'is not a base id (app followed by 14 letters and digits)' });
    if (table === undefined) missing('table');
    else if (table.trim() === '' || table.length > 255)
      errors.push({ field: at('table'), message: 'must be a table’s id or name of 1 to 255 characters' });
    if (base && table) destination = { base_id: base, table };
  } else {
    const id = value('database_id');
    if (id === undefined) missing('database_id');
    else if (!notionId(id))
      errors.push({ field: at('database_id'), message: 'is not a database id or a database’s address' });
    if (id) destination = { database_id: notionId(id) ?? id };
  }
  if (format !== 'google_sheets') {
    if (input.token !== undefined) {
      if (tokenOk(input.token)) credential = input.token;
      else
        errors.push({ field: at('token'), message: 'is not an API token (10 to 500 printable characters, no spaces)' });
    } else if (!credential) missing('token');
  }
  if (errors.length > 0 || !destination || !credential) refuse(errors);
  return { destination, credential, url: destinationPage(format, destination) };
}

/** The destination's page, stored as the webhook's `url` for the owner to open (nothing is ever sent to it). */
function destinationPage(format: IntegrationFormat, destination: Destination): string {
  if (format === 'google_sheets') {
    const d = destination as SheetsDestination;
    return `https://docs.google.com/spreadsheets/d/${d.spreadsheet_id}/edit#sheet=${encodeURIComponent(d.sheet)}`;
  }
  if (format === 'airtable') {
    const d = destination as AirtableDestination;
    return `https://airtable.com/${d.base_id}/${encodeURIComponent(d.table)}`;
  }
  return `https://www.notion.so/${(destination as NotionDestination).database_id.replace(/-/g, '')}`;
}
