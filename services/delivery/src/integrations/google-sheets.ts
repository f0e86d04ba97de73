import { sheets, type sheets_v4 } from '@googleapis/sheets';
import { Gaxios, GaxiosError, type GaxiosOptionsPrepared } from 'gaxios';
import { JWT } from 'google-auth-library';
import { LRUCache } from 'lru-cache';
import type { ServiceAccountKey, SheetsDestination } from '@intake/shared/webhooks';
import { retryAfterMs } from '../send/attempt';
import {
  asText,
  credentialKey,
  FIXED_FIELDS,
  IntegrationError,
  PROJECT_FIELD,
  submissionRow,
  type Integration,
  type IntegrationApis,
  type IntegrationAttempt,
} from './attempt';

/** Google's token endpoint, which the auth library calls and the tests move (GOOGLE_OAUTH_TOKEN_URL). */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const SCOPES = ['https://www.googleapis.com/auth/spreadsheets'];

/**
 * The HTTP client of every Google call: Node's own fetch (gaxios would load node-fetch), one try per attempt (the
 * delivery ladder retries, honouring `Retry-After`), and the token request goes where GOOGLE_OAUTH_TOKEN_URL says.
 */
function transporterFor(apis: IntegrationApis): Gaxios {
  const transporter = new Gaxios({ fetchImplementation: fetch });
  transporter.interceptors.request.add({
    resolved: (options: GaxiosOptionsPrepared) => {
      options.retry = false;
      delete options.retryConfig;
      if (String(options.url) === GOOGLE_TOKEN_URL) options.url = new URL(apis.GOOGLE_OAUTH_TOKEN_URL);
      return Promise.resolve(options);
    },
  });
  return transporter;
}

/**
 * A service account's client, kept per key (its sha256) so its access token (an hour) serves many attempts. The
 * cache holds the parsed key in memory, as the process holds SECRETS_KEY.
 */
const clients = new LRUCache<string, JWT>({ max: 500, ttl: 3_600_000 });

function clientFor(attempt: IntegrationAttempt): JWT {
  const key = `${credentialKey(attempt.credential)}:${attempt.apis.GOOGLE_OAUTH_TOKEN_URL}`;
  let client = clients.get(key);
  if (!client) {
    const account = JSON.parse(attempt.credential) as ServiceAccountKey;
    client = new JWT({
      email: account.client_email,
      key: account.private_key,
      ...(account.private_key_id ? { keyId: account.private_key_id } : {}),
      scopes: SCOPES,
      transporter: transporterFor(attempt.apis),
    });
    clients.set(key, client);
  }
  return client;
}

/** A sheet's name in A1 notation: always quoted, a quote doubled. */
const quoted = (sheet: string) => `'${sheet.replace(/'/g, "''")}'`;

/** Header changes are made one at a time per webhook in this process, so two new fields never take one column. */
const headerLocks = new Map<string, Promise<unknown>>();
function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = headerLocks.get(key) ?? Promise.resolve();
  const next = previous.then(work, work);
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  headerLocks.set(key, settled);
  void settled.then(() => headerLocks.get(key) === settled && headerLocks.delete(key));
  return next;
}

/** What the owner reads in the delivery log when Google refuses. */
function refusal(err: unknown, destination: SheetsDestination): never {
  if (!(err instanceof GaxiosError) || err.status === undefined) throw err;
  const status = err.status;
  const data = err.response?.data as { error?: { message?: string } | string; error_description?: string } | undefined;
  const said =
    typeof data?.error === 'object'
      ? (data.error.message ?? '')
      : [data?.error, data?.error_description].filter(Boolean).join(': ');
  const advice =
    status === 401 || (typeof data?.error === 'string' && /invalid_grant|invalid_client/.test(data.error))
      ? ' (Google refused the service account’s key: connect the integration again with a current key)'
      : status === 403
        ? ` (share the spreadsheet with ${destination.client_email} as an editor)`
        : status === 404
          ? ' (no such spreadsheet, or it is not shared with the service account)'
          : status === 400 && /parse range|Unable to parse/i.test(said)
            ? ` (no sheet named “${destination.sheet}” in the spreadsheet)`
            : '';
  const wait = retryAfterMs(err.response?.headers?.get?.('retry-after'), new Date());
  throw new IntegrationError(
    status,
    `Google Sheets answered ${status}${said ? `: ${said}` : ''}${advice}`,
    wait,
    JSON.stringify(data ?? null).slice(0, 1024),
  );
}

/** One attempt's way to the sheet: the API client, the request options, the destination, its refusals worded. */
interface Sheet {
  client: sheets_v4.Sheets;
  options: Record<string, unknown>;
  destination: SheetsDestination;
  refused(err: unknown): never;
}

function sheetOf(attempt: IntegrationAttempt): Sheet {
  const destination = attempt.destination as SheetsDestination;
  return {
    client: sheets({ version: 'v4', auth: clientFor(attempt), rootUrl: `${attempt.apis.GOOGLE_SHEETS_API_URL}/` }),
    options: { retry: false, signal: attempt.signal, timeout: attempt.timeoutMs },
    destination,
    refused: (err) => refusal(err, destination),
  };
}

async function headerRow({ client, options, destination, refused }: Sheet): Promise<string[]> {
  const got = await client.spreadsheets.values
    .get({ spreadsheetId: destination.spreadsheet_id, range: `${quoted(destination.sheet)}!1:1` }, options)
    .catch(refused);
  return (got.data.values?.[0] ?? []).map((cell) => asText(cell));
}

/**
 * Writes the header row, first giving the sheet the columns it needs: a new sheet has 26, and Sheets refuses a range
 * beyond its grid. Runs only when a field is new, so its extra read costs nothing per submission.
 */
async function extendHeader({ client, options, destination, refused }: Sheet, header: string[]): Promise<void> {
  const spreadsheetId = destination.spreadsheet_id;
  const got = await client.spreadsheets
    .get({ spreadsheetId, fields: 'sheets(properties(sheetId,title,gridProperties(columnCount)))' }, options)
    .catch(refused);
  const sheet = got.data.sheets?.find((s) => s.properties?.title === destination.sheet)?.properties;
  const columns = sheet?.gridProperties?.columnCount ?? header.length;
  if (sheet?.sheetId != null && columns < header.length) {
    const grow = { sheetId: sheet.sheetId, dimension: 'COLUMNS', length: header.length - columns };
    await client.spreadsheets
      .batchUpdate({ spreadsheetId, requestBody: { requests: [{ appendDimension: grow }] } }, options)
      .catch(refused);
  }
  const range = `${quoted(destination.sheet)}!A1`;
  await client.spreadsheets.values
    .update({ spreadsheetId, range, valueInputOption: 'RAW', requestBody: { values: [header] } }, options)
    .catch(refused);
}

/**
 * Google Sheets: one row per submission appended to the sheet, its cells under the header row, which keeps the
 * fields in the order they were first posted (a new field adds a column at the end; a column the owner renamed or
 * added is left alone and stays empty); a form in a project gets a `Project` column with its client's name. Cells are written as they were typed (RAW), so a value that starts with `=`
 * stays text and never becomes a formula.
 */
export const googleSheets: Integration = {
  async check(attempt) {
    const header = await headerRow(sheetOf(attempt));
    const { sheet } = attempt.destination as SheetsDestination;
    return `Connected: the service account can read “${sheet}” (${header.length} columns in its header row)`;
  },

  async write(attempt) {
    const sheet = sheetOf(attempt);
    const { client, options, destination } = sheet;
    const row = submissionRow(attempt.data);
    const { header, added } = await oneAtATime(attempt.webhookId, async () => {
      const current = await headerRow(sheet);
      const client = row.project === undefined ? [] : [PROJECT_FIELD];
      const wanted = [...FIXED_FIELDS, ...client, ...row.fields.map(([name]) => name)];
      const missing = wanted.filter((name, i) => !current.includes(name) && wanted.indexOf(name) === i);
      if (missing.length > 0) await extendHeader(sheet, [...current, ...missing]);
      return { header: [...current, ...missing], added: missing };
    });
    const cells = new Map<string, string>([
      [FIXED_FIELDS[0], row.id],
      [FIXED_FIELDS[1], row.receivedAt],
    ]);
    for (const [name, value] of row.fields) if (!cells.has(name)) cells.set(name, value);
    if (row.project !== undefined && !cells.has(PROJECT_FIELD)) cells.set(PROJECT_FIELD, row.project);
    const appended = await client.spreadsheets.values
      .append(
        {
          spreadsheetId: destination.spreadsheet_id,
          range: `${quoted(destination.sheet)}!A1`,
          valueInputOption: 'RAW',
          insertDataOption: 'INSERT_ROWS',
          requestBody: { values: [header.map((name) => cells.get(name) ?? '')] },
        },
        options,
      )
      .catch(sheet.refused);
    const where = appended.data.updates?.updatedRange ?? destination.sheet;
    return `Appended a row at ${where}${added.length > 0 ? `; new columns: ${added.join(', ')}` : ''}`;
  },
};
