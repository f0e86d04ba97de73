import { createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import http from 'node:http';
import { listen } from '@intake/shared/testing';

/**
 * Local stand-ins for the APIs the integrations call, written from each API's public reference and answering as it
 * documents (its paths, its bodies, its errors): Google's OAuth token endpoint for a service account's signed JWT
 * (developers.google.com/identity/protocols/oauth2/service-account#httprest), Sheets' `values.get`, `values.update`
 * and `values.append` (developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values), Airtable's base
 * schema and create-records endpoints (airtable.com/developers/web/api), Notion's databases, data sources and pages
 * (developers.notion.com/reference). Each records every request, and can be told to answer the next ones with a 429.
 */

export interface StandIn {
  url: string;
  /** Every request's method, path and query, and its raw headers and body. */
  requests: { at: number; method: string; path: string; headers: http.IncomingHttpHeaders; body: string }[];
  /** The next `count` API requests are answered 429, with `Retry-After: seconds` unless null. */
  rateLimitNext(count: number, seconds: number | null): void;
  close(): Promise<void>;
}

type Handler = (req: {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}) => { status: number; body: unknown; headers?: Record<string, string> };

async function serve(handle: Handler, limited: (status: number) => unknown): Promise<StandIn> {
  const requests: StandIn['requests'] = [];
  let limit: { count: number; seconds: number | null } = { count: 0, seconds: 0 };
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const body = Buffer.concat(chunks).toString('utf8');
      const method = req.method ?? 'GET';
      requests.push({ at: Date.now(), method, path: `${url.pathname}${url.search}`, headers: req.headers, body });
      let answer: ReturnType<Handler>;
      if (limit.count > 0 && !url.pathname.endsWith('/token')) {
        limit.count -= 1;
        const headers: Record<string, string> = limit.seconds === null ? {} : { 'retry-after': String(limit.seconds) };
        answer = { status: 429, body: limited(429), headers };
      } else {
        try {
          answer = handle({ method, path: url.pathname, query: url.searchParams, headers: req.headers, body });
        } catch (err) {
          answer = { status: 400, body: limited(400) ?? { error: String(err) } };
        }
      }
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
  });
  return {
    url: server.url,
    requests,
    rateLimitNext: (count, seconds) => (limit = { count, seconds }),
    close: server.close,
  };
}

const bearer = (headers: http.IncomingHttpHeaders) => /^Bearer (\S+)$/.exec(headers.authorization ?? '')?.[1];

/** A Google service account's key file, as the Cloud console downloads it, with a fresh RSA key. */
export function serviceAccountKey(email = 'intake-writer@project-1.iam.gserviceaccount.com') {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    type: 'service_account',
    project_id: 'project-1',
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: email,
    client_id: '100000000000000000001',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
  };
}

export interface GoogleStandIn extends StandIn {
  /** Spreadsheets by id: each sheet's rows (and columns, 26 unless said), the service accounts it is shared with. */
  spreadsheets: Map<
    string,
    { sheets: Map<string, string[][]>; sharedWith: Set<string>; columns?: Map<string, number> }
  >;
  /** Service accounts Google knows (their keys' public halves by client e-mail). */
  register(key: { client_email: string; private_key: string }): void;
  /** Access tokens issued, by client e-mail. */
  issued: Map<string, string>;
}

const base64url = (s: string) => Buffer.from(s, 'base64url');

/** Checks a service account's JWT bearer assertion as Google's token endpoint does; the client e-mail when good. */
function checkAssertion(assertion: string, keys: Map<string, string>): string | undefined {
  const [head, claims, signature] = assertion.split('.');
  if (!head || !claims || !signature) return undefined;
  const header = JSON.parse(base64url(head).toString()) as { alg?: string };
  const payload = JSON.parse(base64url(claims).toString()) as Record<string, unknown>;
  const publicKey = keys.get(String(payload['iss']));
  if (header.alg !== 'RS256' || !publicKey) return undefined;
  if (!verify('RSA-SHA256', Buffer.from(`${head}.${claims}`), publicKey, base64url(signature))) return undefined;
  const now = Date.now() / 1000;
  const iat = Number(payload['iat']);
  const exp = Number(payload['exp']);
  if (payload['aud'] !== 'https://oauth2.googleapis.com/token' || !(exp > now && exp - iat <= 3600)) return undefined;
  if (!String(payload['scope']).split(' ').includes('https://www.googleapis.com/auth/spreadsheets')) return undefined;
  return String(payload['iss']);
}

/** A1 ranges as the integration writes them: `'Sheet'!1:1` (the header row) or `'Sheet'!A1` (the table there). */
function parseRange(range: string): { sheet: string; headerOnly: boolean } {
  const match = /^'((?:[^']|'')+)'!(1:1|A1)$/.exec(range);
  if (!match) throw new Error(`Unable to parse range: ${range}`);
  return { sheet: match[1]!.replace(/''/g, "'"), headerOnly: match[2] === '1:1' };
}

const googleError = (status: number, message: string, state: string) => ({
  status,
  body: { error: { code: status, message, status: state } },
});

type Spreadsheet = GoogleStandIn['spreadsheets'] extends Map<string, infer S> ? S : never;
type Request = Parameters<Handler>[0];

const columnsOf = (spreadsheet: Spreadsheet, sheet: string) => spreadsheet.columns?.get(sheet) ?? 26;

/** `spreadsheets.get` (the sheets' properties) and `spreadsheets.batchUpdate` (appendDimension of columns). */
function spreadsheetMethod(req: Request, spreadsheet: Spreadsheet): ReturnType<Handler> {
  const names = [...spreadsheet.sheets.keys()];
  if (req.method === 'GET') {
    const sheets = names.map((title, sheetId) => ({
      properties: { sheetId, title, gridProperties: { columnCount: columnsOf(spreadsheet, title) } },
    }));
    return { status: 200, body: { sheets } };
  }
  const { requests } = JSON.parse(req.body) as {
    requests: { appendDimension?: { sheetId: number; dimension: string; length: number } }[];
  };
  for (const { appendDimension: add } of requests) {
    const title = add && add.dimension === 'COLUMNS' ? names[add.sheetId] : undefined;
    if (!add || title === undefined) return googleError(400, 'Invalid requests[0]', 'INVALID_ARGUMENT');
    spreadsheet.columns ??= new Map();
    spreadsheet.columns.set(title, columnsOf(spreadsheet, title) + add.length);
  }
  return { status: 200, body: { replies: requests.map(() => ({})) } };
}

/** `values.get` of the header row, `values.update` of it, `values.append` of rows: within the sheet's grid. */
function valuesMethod(
  req: Request,
  spreadsheet: Spreadsheet,
  call: { id: string; range: string; append: boolean },
): ReturnType<Handler> {
  const { sheet, headerOnly } = parseRange(call.range);
  const rows = spreadsheet.sheets.get(sheet);
  if (!rows) return googleError(400, `Unable to parse range: ${call.range}`, 'INVALID_ARGUMENT');
  if (req.method === 'GET' && headerOnly)
    return {
      status: 200,
      body: { range: call.range, majorDimension: 'ROWS', ...(rows[0] ? { values: [rows[0]] } : {}) },
    };
  if (req.query.get('valueInputOption') !== 'RAW') throw new Error('valueInputOption');
  const values = (JSON.parse(req.body) as { values: unknown[][] }).values;
  if (!values.every((row) => row.every((cell) => typeof cell === 'string'))) throw new Error('cells');
  const widest = Math.max(...values.map((row) => row.length));
  if (widest > columnsOf(spreadsheet, sheet))
    return googleError(
      400,
      `Range ('${sheet}'!A1) exceeds grid limits. Max rows: 1000, max columns: ${columnsOf(spreadsheet, sheet)}`,
      'INVALID_ARGUMENT',
    );
  if (req.method === 'PUT' && !call.append) {
    rows[0] = values[0] as string[];
    return { status: 200, body: { spreadsheetId: call.id, updatedRange: call.range, updatedRows: 1 } };
  }
  if (req.method === 'POST' && call.append && req.query.get('insertDataOption') === 'INSERT_ROWS') {
    rows.push(...(values as string[][]));
    const at = `'${sheet}'!A${rows.length}`;
    return { status: 200, body: { spreadsheetId: call.id, updates: { updatedRange: at, updatedRows: 1 } } };
  }
  return googleError(400, 'Invalid request', 'INVALID_ARGUMENT');
}

/** Google's token endpoint, the Sheets API's values methods, its spreadsheet's properties and column growth. */
export async function googleStandIn(): Promise<GoogleStandIn> {
  const keys = new Map<string, string>();
  const issued = new Map<string, string>();
  const spreadsheets: GoogleStandIn['spreadsheets'] = new Map();
  const handle: Handler = (req) => {
    if (req.method === 'POST' && req.path === '/token') {
      const form = new URLSearchParams(req.body);
      const email =
        form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer'
          ? checkAssertion(form.get('assertion') ?? '', keys)
          : undefined;
      if (!email) return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } };
      const token = `ya29.${randomBytes(24).toString('base64url')}`;
      issued.set(token, email);
      return { status: 200, body: { access_token: token, expires_in: 3599, token_type: 'Bearer' } };
    }
    const match = /^\/v4\/spreadsheets\/([^/:]+)(?::batchUpdate|\/values\/([^/]+?)(:append)?)?$/.exec(req.path);
    if (!match) return googleError(404, 'Not found', 'NOT_FOUND');
    const email = issued.get(bearer(req.headers) ?? '');
    if (!email) return googleError(401, 'Request had invalid authentication credentials.', 'UNAUTHENTICATED');
    const spreadsheet = spreadsheets.get(match[1]!);
    if (!spreadsheet) return googleError(404, 'Requested entity was not found.', 'NOT_FOUND');
    if (!spreadsheet.sharedWith.has(email))
      return googleError(403, 'The caller does not have permission', 'PERMISSION_DENIED');
    if (match[2] === undefined) return spreadsheetMethod(req, spreadsheet);
    return valuesMethod(req, spreadsheet, { id: match[1]!, range: decodeURIComponent(match[2]), append: !!match[3] });
  };
  const standIn = await serve(handle, (status) =>
    status === 429
      ? { error: { code: 429, message: 'Quota exceeded for quota metric', status: 'RESOURCE_EXHAUSTED' } }
      : undefined,
  );
  return {
    ...standIn,
    spreadsheets,
    issued,
    register(key) {
      keys.set(key.client_email, createPublicKey(key.private_key).export({ type: 'spki', format: 'pem' }).toString());
    },
  };
}

export interface AirtableStandIn extends StandIn {
  /** The base's tables: their fields, and the records created in them. */
  tables: { id: string; name: string; fields: { id: string; name: string; type: string }[]; records: unknown[] }[];
}

const airtableError = (status: number, type: string, message: string) => ({
  status,
  body: { error: { type, message } },
});

/** Airtable's base schema (`GET /v0/meta/bases/:base/tables`) and create records (`POST /v0/:base/:table`). */
export async function airtableStandIn(props: { baseId: string; token: string }): Promise<AirtableStandIn> {
  const tables: AirtableStandIn['tables'] = [];
  const handle: Handler = (req) => {
    if (bearer(req.headers) !== props.token)
      return airtableError(401, 'AUTHENTICATION_REQUIRED', 'Authentication required');
    if (req.method === 'GET' && req.path === `/v0/meta/bases/${props.baseId}/tables`)
      return {
        status: 200,
        body: { tables: tables.map(({ id, name, fields }) => ({ id, name, primaryFieldId: fields[0]?.id, fields })) },
      };
    const match = /^\/v0\/([^/]+)\/([^/]+)$/.exec(req.path);
    const table =
      match?.[1] === props.baseId &&
      tables.find((t) => t.id === decodeURIComponent(match[2]!) || t.name === decodeURIComponent(match[2]!));
    if (req.method !== 'POST' || !table)
      return airtableError(404, 'NOT_FOUND', 'Could not find what you are looking for');
    const body = JSON.parse(req.body) as { records?: { fields?: Record<string, unknown> }[] };
    if (!Array.isArray(body.records) || body.records.length < 1 || body.records.length > 10)
      return airtableError(422, 'INVALID_RECORDS', 'Records must be an array of 1 to 10 records');
    const created = [];
    for (const record of body.records) {
      const unknown = Object.keys(record.fields ?? {}).find((name) => !table.fields.some((f) => f.name === name));
      if (unknown) return airtableError(422, 'UNKNOWN_FIELD_NAME', `Unknown field name: "${unknown}"`);
      const made = { id: `rec${randomBytes(7).toString('hex')}`, createdTime: new Date().toISOString(), ...record };
      table.records.push(made);
      created.push(made);
    }
    return { status: 200, body: { records: created } };
  };
  const standIn = await serve(handle, (status) =>
    status === 429
      ? { errors: [{ error: 'RATE_LIMIT_REACHED', message: 'Rate limit exceeded. Please try again later' }] }
      : undefined,
  );
  return { ...standIn, tables };
}

export interface NotionStandIn extends StandIn {
  /** The database's data source: its properties (name → type) and the pages created in it. */
  source: { properties: Record<string, string>; pages: { properties: Record<string, unknown> }[] };
}

const notionError = (status: number, code: string, message: string) => ({
  status,
  body: { object: 'error', status, code, message },
});

/** The shape each property type's value has in a page (developers.notion.com/reference/page-property-values). */
const PROPERTY_SHAPES: Record<string, (v: Record<string, unknown>) => boolean> = {
  title: (v) => Array.isArray(v['title']),
  rich_text: (v) => Array.isArray(v['rich_text']),
  email: (v) => typeof v['email'] === 'string',
  number: (v) => typeof v['number'] === 'number',
  checkbox: (v) => typeof v['checkbox'] === 'boolean',
  select: (v) => typeof (v['select'] as { name?: unknown })?.name === 'string',
};

/** Notion's `GET /v1/databases/:id`, `GET /v1/data_sources/:id` and `POST /v1/pages` (API version 2025-09-03). */
export async function notionStandIn(props: { databaseId: string; token: string }): Promise<NotionStandIn> {
  const dataSourceId = '248104cd-477e-80af-bc30-000bd2d8e3f1';
  const source: NotionStandIn['source'] = { properties: {}, pages: [] };
  const handle: Handler = (req) => {
    if (bearer(req.headers) !== props.token) return notionError(401, 'unauthorized', 'API token is invalid.');
    if (req.headers['notion-version'] !== '2025-09-03')
      return notionError(400, 'missing_version', 'Notion-Version header failed validation');
    if (req.method === 'GET' && req.path === `/v1/databases/${props.databaseId}`)
      return { status: 200, body: { object: 'database', id: props.databaseId, data_sources: [{ id: dataSourceId }] } };
    if (req.method === 'GET' && req.path === `/v1/data_sources/${dataSourceId}`) {
      const properties = Object.fromEntries(
        Object.entries(source.properties).map(([name, type], i) => [name, { id: `p${i}`, name, type }]),
      );
      return { status: 200, body: { object: 'data_source', id: dataSourceId, properties } };
    }
    if (req.method === 'POST' && req.path === '/v1/pages') {
      const body = JSON.parse(req.body) as { parent?: { data_source_id?: string }; properties?: Record<string, never> };
      if (body.parent?.data_source_id !== dataSourceId)
        return notionError(404, 'object_not_found', 'Could not find data source');
      for (const [name, value] of Object.entries(body.properties ?? {})) {
        const type = source.properties[name];
        if (!type || !PROPERTY_SHAPES[type]?.(value))
          return notionError(400, 'validation_error', `${name} is not a property that exists or is not a ${type}.`);
      }
      source.pages.push({ properties: body.properties ?? {} });
      return { status: 200, body: { object: 'page', id: randomBytes(16).toString('hex') } };
    }
    return notionError(404, 'object_not_found', 'Could not find the object');
  };
  const standIn = await serve(handle, (status) =>
    status === 429 ? { object: 'error', status: 429, code: 'rate_limited', message: 'Rate limited' } : undefined,
  );
  return { ...standIn, source };
}
