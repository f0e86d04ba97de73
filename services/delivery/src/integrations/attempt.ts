import { sha256Hex, type Config } from '@intake/shared/base';
import { receivedAt, toTimestamp } from '@intake/shared/contracts';
import { type Destination, type EventType } from '@intake/shared/webhooks';
import { timeAttempt, type AttemptResult } from '../send/attempt';

/** Where each integration's API is (its public address; tests point these at local stand-ins). */
export type IntegrationApis = Pick<
  Config,
  'GOOGLE_OAUTH_TOKEN_URL' | 'GOOGLE_SHEETS_API_URL' | 'AIRTABLE_API_URL' | 'NOTION_API_URL'
>;

/** One attempt of an integration: what to write, where, with which credential, within what time. */
export interface IntegrationAttempt {
  type: EventType;
  data: Record<string, unknown>;
  formName: string;
  webhookId: string;
  destination: Destination;
  /** The credential, opened: a service account's key (JSON) or an API token. Never logged, never shown. */
  credential: string;
  apis: IntegrationApis;
  /** Aborts the attempt's requests at its deadline. */
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * An integration: `write` makes a row, record or page of a submission; `check` (the test ping) only proves the
 * credential reaches the destination, and writes nothing. Each answers a short note for the delivery log.
 */
export interface Integration {
  write(attempt: IntegrationAttempt): Promise<string>;
  check(attempt: IntegrationAttempt): Promise<string>;
}

/**
 * A refusal by the tool's API, worded for the owner (the delivery log shows it): its status, what the API said and what
 * to do about it; `retryAfterMs` from its `Retry-After`. Never carries the credential.
 */
export class IntegrationError extends Error {
  constructor(
    readonly statusCode: number | null,
    message: string,
    readonly retryAfterMs?: number,
    readonly responseBody?: string,
  ) {
    super(message);
  }
}

/**
 * A submission as an integration writes it: its id, when it came, its fields in posted order as text, and its form's
 * client (the envelope's `project`; undefined in the account's default project, and in a delivery made before it).
 */
export interface SubmissionRow {
  id: string;
  receivedAt: string;
  fields: [string, string][];
  project: string | undefined;
}

/** The longest text a cell, field or property gets (Sheets holds 50,000 characters a cell). */
export const CELL_MAX = 50_000;

/** A field's value as text: a list (a repeated field) joined by commas, anything else as JSON. */
export function asText(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
      : Array.isArray(value)
        ? value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')
        : JSON.stringify(value);
  return text.length > CELL_MAX ? text.slice(0, CELL_MAX) : text;
}

/** The submission of a `submission.created` delivery's data (fan-out's submissionData). */
export function submissionRow(data: Record<string, unknown>): SubmissionRow {
  const id = String(data['submission_id']);
  const payload = (data['payload'] ?? {}) as Record<string, unknown>;
  const project = data['project'] as { name?: unknown } | null | undefined;
  return {
    id,
    receivedAt: toTimestamp(new Date(receivedAt(id))),
    fields: Object.entries(payload).map(([name, value]) => [name, asText(value)]),
    project: typeof project?.name === 'string' ? asText(project.name) : undefined,
  };
}

/** A key for a credential in a cache: its sha256 (the credential itself is not kept as a key). */
export const credentialKey = (credential: string): string => sha256Hex(credential);

/** The submission's id and time, written under these names (Sheets' first columns; elsewhere fields by these names). */
export const FIXED_FIELDS = ['Submission', 'Received at'] as const;

/**
 * The form's client, written under this name when the form is in a project (Sheets' third column; elsewhere a field by
 * this name), unless a posted field of that name took it.
 */
export const PROJECT_FIELD = 'Project';

/**
 * A submission's fields mapped by name onto a destination's (`names`: exactly, else ignoring case), each value made
 * into what that field takes (`made`: undefined when it cannot be); the id, the time and the client go where there are
 * fields of their names (the client after the posted fields, which keep a field of its name they already wrote to).
 * `skipped`: the posted fields that found no field of their name, or one already written, or could not be made.
 */
export function fieldsByName<V>(
  row: SubmissionRow,
  names: readonly string[],
  made: (name: string, value: string) => V | undefined,
): { values: Record<string, V>; skipped: string[] } {
  const nameOf = (field: string) =>
    names.find((n) => n === field) ?? names.find((n) => n.toLowerCase() === field.toLowerCase());
  const values: Record<string, V> = {};
  const skipped: string[] = [];
  // [name, value, posted]: only a posted field is named as skipped.
  const all: [string, string, boolean][] = [
    [FIXED_FIELDS[0], row.id, false],
    [FIXED_FIELDS[1], row.receivedAt, false],
    ...row.fields.map(([field, value]): [string, string, boolean] => [field, value, true]),
    ...(row.project === undefined ? [] : [[PROJECT_FIELD, row.project, false] as [string, string, boolean]]),
  ];
  for (const [field, value, posted] of all) {
    const name = nameOf(field);
    const written = name !== undefined && !(name in values) ? made(name, value) : undefined;
    if (written !== undefined) values[name!] = written;
    else if (posted) skipped.push(field);
  }
  return { values, skipped };
}

/**
 * Runs one attempt of an integration and reports it as every attempt is reported (never throws): a note of what was
 * written on success; the API's refusal (its status, the reason worded for the owner) or the network's failure.
 */
export async function runIntegration(
  integration: Integration,
  attempt: IntegrationAttempt,
  startedAt: Date,
): Promise<AttemptResult> {
  const done = timeAttempt(startedAt);
  try {
    const note = await (attempt.type === 'webhook.test' ? integration.check(attempt) : integration.write(attempt));
    return done({ ok: true, outcome: 'success', statusCode: 200, error: null, responseBody: note });
  } catch (err) {
    if (err instanceof IntegrationError)
      return done({
        ok: false,
        outcome: err.statusCode === null ? 'network_error' : 'http_error',
        statusCode: err.statusCode,
        error: err.message,
        responseBody: err.responseBody ?? null,
        ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
      });
    if (attempt.signal.aborted || (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError')
      return done({
        ok: false,
        outcome: 'timeout',
        statusCode: null,
        error: `no answer within ${attempt.timeoutMs} ms`,
        responseBody: null,
      });
    const e = err as { code?: string; cause?: { code?: string } };
    const code = e.cause?.code ?? e.code ?? 'network error';
    return done({
      ok: false,
      outcome: 'network_error',
      statusCode: null,
      error: `${code}: the API could not be reached`,
      responseBody: null,
    });
  }
}
