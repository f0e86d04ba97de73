import { LRUCache } from 'lru-cache';
import { request } from 'undici';
import type { AirtableDestination } from '@intake/shared/webhooks';
import { retryAfterMs } from '../send/attempt';
import {
  credentialKey,
  fieldsByName,
  IntegrationError,
  submissionRow,
  type Integration,
  type IntegrationAttempt,
} from './attempt';

interface Table {
  id: string;
  name: string;
  fields: { id: string; name: string; type: string }[];
}

/** How long Airtable says a client over its rate limit (5 requests a second per base) must wait. */
const AIRTABLE_RATE_WAIT_MS = 30_000;

/** A base's tables, kept a minute per base and token (a new field in Airtable is seen within the minute). */
const schemas = new LRUCache<string, Table[]>({ max: 500, ttl: 60_000 });

/** One call to Airtable's REST API (https://airtable.com/developers/web/api/introduction); a refusal worded. */
async function call<T>(attempt: IntegrationAttempt, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await request(`${attempt.apis.AIRTABLE_API_URL}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${attempt.credential}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: attempt.signal,
    headersTimeout: attempt.timeoutMs,
    bodyTimeout: attempt.timeoutMs,
  });
  const text = await res.body.text();
  if (res.statusCode >= 200 && res.statusCode < 300) return JSON.parse(text) as T;
  let said = '';
  try {
    const error = (JSON.parse(text) as { error?: string | { type?: string; message?: string } }).error;
    said = typeof error === 'string' ? error : [error?.type, error?.message].filter(Boolean).join(': ');
  } catch {
    // not JSON: the status says it
  }
  const advice =
    res.statusCode === 401
      ? ' (Airtable refused the token: connect the integration again with a current personal access token)'
      : res.statusCode === 403 || res.statusCode === 404
        ? ' (the token needs the scopes data.records:write and schema.bases:read, and access to this base)'
        : '';
  throw new IntegrationError(
    res.statusCode,
    `Airtable answered ${res.statusCode}${said ? `: ${said}` : ''}${advice}`,
    // Airtable asks a client over its rate to wait 30 s, in its documentation rather than a header.
    retryAfterMs(res.headers['retry-after'], new Date()) ??
      (res.statusCode === 429 ? AIRTABLE_RATE_WAIT_MS : undefined),
    text.slice(0, 1024),
  );
}

async function tableOf(attempt: IntegrationAttempt): Promise<Table> {
  const { base_id: base, table } = attempt.destination as AirtableDestination;
  const key = `${credentialKey(attempt.credential)}:${base}`;
  let tables = schemas.get(key);
  if (!tables) {
    tables = (await call<{ tables: Table[] }>(attempt, 'GET', `/v0/meta/bases/${base}/tables`)).tables;
    schemas.set(key, tables);
  }
  const found = tables.find((t) => t.id === table) ?? tables.find((t) => t.name === table);
  if (!found) throw new IntegrationError(404, `Airtable: the base has no table “${table}”`);
  return found;
}

/**
 * Airtable: one record per submission in the table, each field written to the table's field of the same name (exactly,
 * else ignoring case; values as text, which Airtable converts to the field's type: `typecast`). A posted field the
 * table does not have is skipped and named in the delivery log; `Submission`, `Received at` and (a form in a project)
 * `Project` are written when the table has fields by those names.
 */
export const airtable: Integration = {
  async check(attempt) {
    const table = await tableOf(attempt);
    return `Connected: the token can read table “${table.name}” (${table.fields.length} fields)`;
  },

  async write(attempt) {
    const { base_id: base } = attempt.destination as AirtableDestination;
    const table = await tableOf(attempt);
    const { values: fields, skipped } = fieldsByName(
      submissionRow(attempt.data),
      table.fields.map((f) => f.name),
      (_name, value) => value,
    );
    const created = await call<{ records: { id: string }[] }>(attempt, 'POST', `/v0/${base}/${table.id}`, {
      records: [{ fields }],
      typecast: true,
    });
    const id = created.records[0]?.id ?? '?';
    return `Created record ${id} in “${table.name}”${
      skipped.length > 0 ? `; skipped fields the table does not have: ${skipped.join(', ')}` : ''
    }`;
  },
};
