import { eventually, factories } from '@intake/shared/testing';
import { startStack } from '../../console/test/stack';
import { processEnv, startService, type ServiceProcess } from '../faults/harness';
import {
  airtableStandIn,
  googleStandIn,
  notionStandIn,
  serviceAccountKey,
  type AirtableStandIn,
  type GoogleStandIn,
  type NotionStandIn,
} from './stand-ins';

/**
 * Integrations end to end: the owner connects each through the management API, a visitor posts, and the delivery
 * service (a real process, its log kept) writes through the tool's own client to a local stand-in of its API.
 */
export const BASE_ID = 'appA1b2C3d4E5f6G7';
export const AIRTABLE_TOKEN = `pat${'x'.repeat(14)}.${'f'.repeat(64)}`;
export const NOTION_DATABASE = '1429989f-e8ac-4eff-bc8f-57f56486db54';
export const NOTION_TOKEN = `ntn_${'7'.repeat(46)}`;
export const SPREADSHEET = '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms';
export const KEY = serviceAccountKey();

interface Answer {
  status: number;
  body: Record<string, unknown> & { data?: Record<string, unknown>[] };
}

export const t = {} as {
  stack: Awaited<ReturnType<typeof startStack>>;
  delivery: ServiceProcess;
  google: GoogleStandIn;
  airtable: AirtableStandIn;
  notion: NotionStandIn;
  key: string;
  /** Everything the delivery process wrote, and every answer the management API gave. */
  output: string[];
  answers: string[];
};

/** The suite's set-up: the stand-ins, the stack without its delivery workers, a delivery process, an account. */
export function integrationSuite(): void {
  beforeAll(startAll, 60_000);
  afterAll(async () => {
    await t.delivery?.stop();
    await t.stack?.close();
    await Promise.all([t.google?.close(), t.airtable?.close(), t.notion?.close()]);
  });
}

async function startAll(): Promise<void> {
  [t.google, t.airtable, t.notion] = await Promise.all([
    googleStandIn(),
    airtableStandIn({ baseId: BASE_ID, token: AIRTABLE_TOKEN }),
    notionStandIn({ databaseId: NOTION_DATABASE, token: NOTION_TOKEN }),
  ]);
  const apis = {
    GOOGLE_OAUTH_TOKEN_URL: `${t.google.url}/token`,
    GOOGLE_SHEETS_API_URL: t.google.url,
    AIRTABLE_API_URL: t.airtable.url,
    NOTION_API_URL: t.notion.url,
  };
  t.stack = await startStack(apis, { without: ['delivery'] });
  t.output = [];
  t.answers = [];
  const env = processEnv(t.stack.platform.config, {
    ...apis,
    PUBLIC_BASE_URL: t.stack.url,
    WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms',
    WEBHOOK_TIMEOUT_MS: '5000',
    LOG_LEVEL: 'debug',
  });
  t.delivery = await startService('delivery', env, { ready: true, output: t.output });
  t.key = (await factories.account(t.stack.platform.db)).managementKey;
}

export async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${t.stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  t.answers.push(text);
  return { status: res.status, body: text ? (JSON.parse(text) as Answer['body']) : {} };
}

export async function newForm(): Promise<{ id: string; slug: string }> {
  return (await call('POST', '/v1/forms', { name: 'Leads', honeypot_field: 'hp-never-posted' })).body as never;
}

export async function post(slug: string, fields: Record<string, string>): Promise<string> {
  const res = await fetch(`${t.stack.url}/v1/f/${slug}`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(fields),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

export type Attempt = {
  started_at: string;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
};
export type Delivery = {
  submission_id: string | null;
  status: string;
  next_attempt_at: string | null;
  attempts: Attempt[];
};

/** The delivery of a submission once it has ended (succeeded or failed). */
export async function endedDelivery(webhookId: string, submissionId: string): Promise<Delivery> {
  return eventually(
    async () => {
      const list = (await call('GET', `/v1/webhooks/${webhookId}/deliveries`)).body.data as unknown as Delivery[];
      const found = list.find((d) => d.submission_id === submissionId);
      return found && (found.status === 'succeeded' || found.status === 'failed') && found;
    },
    { timeoutMs: 20_000, message: `the delivery of ${submissionId} ended` },
  );
}
