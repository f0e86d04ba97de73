import { buildServiceApp, startOutboxRelay } from '@intake/shared';
import { createTestPlatform, factories, listen, type ConfigOverrides, type TestPlatform } from '@intake/shared/testing';
import { ingestService } from '../src';

export interface IngestHarness {
  platform: TestPlatform;
  url: string;
  close(): Promise<void>;
}

/** The ingest app over real HTTP on a real platform (Postgres, NATS, Redis of this machine). */
export async function startIngest(overrides: ConfigOverrides = {}, options: { relay?: boolean; relayPollMs?: number } = {}): Promise<IngestHarness> {
  const platform = await createTestPlatform(overrides);
  const server = await listen(buildServiceApp(ingestService, platform).callback());
  const relay = options.relay ? startOutboxRelay({ db: platform.db, databaseUrl: platform.config.DATABASE_URL, nats: platform.nats, logger: platform.logger, pollMs: options.relayPollMs ?? 100 }) : undefined;
  return {
    platform,
    url: server.url,
    async close() {
      await relay?.stop();
      await server.close();
      await platform.close();
    },
  };
}

/** A fresh account (plan, quota) with one live form. */
export async function accountWithForm(h: IngestHarness, props: { plan?: 'free' | 'pro' | 'team'; quota?: number; form?: Parameters<typeof factories.form>[2] } = {}) {
  const account = await factories.account(h.platform.db, { plan: props.plan ?? 'pro', quota: props.quota });
  const form = await factories.form(h.platform.db, account.id, props.form ?? {});
  return { account, form, post: poster(h.url, form.slug) };
}

export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { type?: string; id?: string; errors?: { field: string; message: string }[] };
  text: string;
}

/** POSTs to a form: a string body goes as-is with `contentType`, an object as JSON, URLSearchParams/FormData as browsers send them. */
export function poster(url: string, slug: string) {
  return async (body?: string | Record<string, unknown> | URLSearchParams | FormData | Buffer, headers: Record<string, string> = {}): Promise<Answer> => {
    const isJson = body !== undefined && typeof body === 'object' && !(body instanceof URLSearchParams) && !(body instanceof FormData) && !Buffer.isBuffer(body);
    const res = await fetch(`${url}/v1/f/${encodeURIComponent(slug)}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...(isJson ? { 'content-type': 'application/json' } : {}), ...headers },
      body: isJson ? JSON.stringify(body) : (body as RequestInit['body']),
    });
    const text = await res.text();
    let parsed: Answer['body'] = {};
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = {};
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

export function slugOf(answer: Answer): string | undefined {
  return answer.body.type?.split('/').pop();
}

export async function submissionsOf(h: IngestHarness, formId: string) {
  return h.platform.db('submissions').where({ form_id: formId }).orderBy('id');
}
