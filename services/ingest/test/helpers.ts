import { randomBytes } from 'node:crypto';
import { AckPolicy, DeliverPolicy } from 'nats';
import { buildServiceApp, startPlatformRelay } from '@intake/shared/runtime';
import {
  createTestPlatform,
  eventually,
  expectMatchesOpenApi,
  factories,
  listen,
  registerOpenApi,
  type ConfigOverrides,
  type TestPlatform,
} from '@intake/shared/testing';
import { openApi } from '@intake/management';
import { createIngestService, type IngestDeps } from '../src';

export interface IngestHarness {
  platform: TestPlatform;
  /** The app's per-process state (form cache, group writer, unsettled files). */
  deps: IngestDeps;
  url: string;
  close(): Promise<void>;
}

/**
 * The ingest app over real HTTP on a real platform (Postgres, NATS, Redis of this machine). With
 * `relay`, events are published as the services publish them: by ingest right after each commit
 * (`publishAfterCommit`, which defaults to `relay`), and by an outbox relay; with neither, nothing
 * publishes them and they stay in the outbox.
 */
export async function startIngest(
  overrides: ConfigOverrides = {},
  options: { relay?: boolean; relayPollMs?: number; publishAfterCommit?: boolean } = {},
): Promise<IngestHarness> {
  const platform = await createTestPlatform(overrides);
  const service = createIngestService({ publishAfterCommit: options.publishAfterCommit ?? options.relay ?? false });
  const server = await listen(buildServiceApp(service, platform).callback());
  registerOpenApi(server.url, openApi(platform));
  const relay = options.relay ? startPlatformRelay(platform, { pollMs: options.relayPollMs ?? 100 }) : undefined;
  return {
    platform,
    deps: service.deps(platform),
    url: server.url,
    async close() {
      await relay?.stop();
      await server.close();
      await platform.close();
    },
  };
}

export interface PublishedEvent {
  event: Record<string, unknown>;
  msgId: string | undefined;
}

/** Every event in the stream so far (on `subject` when given), read by a throwaway consumer. */
export async function publishedEvents(h: IngestHarness, subject?: string): Promise<PublishedEvent[]> {
  const { nats } = h.platform;
  const durable = `probe_${randomBytes(4).toString('hex')}`;
  await nats.jsm.consumers.add(nats.names.eventsStream, {
    durable_name: durable,
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.All,
    ...(subject ? { filter_subject: nats.names.subject(subject) } : {}),
  });
  try {
    const { num_pending: pending } = await nats.jsm.consumers.info(nats.names.eventsStream, durable);
    const consumer = await nats.js.consumers.get(nats.names.eventsStream, durable);
    const out: PublishedEvent[] = [];
    for (let i = 0; i < pending; i++) {
      const msg = await consumer.next({ expires: 1000 });
      if (msg) out.push({ event: msg.json<Record<string, unknown>>(), msgId: msg.headers?.get('Nats-Msg-Id') });
    }
    return out;
  } finally {
    await nats.jsm.consumers.delete(nats.names.eventsStream, durable);
  }
}

/** The event of one submission, once the relay has published it. */
export function publishedEvent(h: IngestHarness, subject: string, submissionId: string): Promise<PublishedEvent> {
  return eventually(
    async () => (await publishedEvents(h, subject)).find((e) => e.event.submission_id === submissionId),
    { message: `the ${subject} event of ${submissionId}` },
  );
}

/** A fresh account (plan, quota) with one live form. */
export async function accountWithForm(
  h: IngestHarness,
  props: { plan?: 'free' | 'pro' | 'team'; quota?: number; form?: Parameters<typeof factories.form>[2] } = {},
) {
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
  return async (
    body?: string | Record<string, unknown> | URLSearchParams | FormData | Buffer,
    headers: Record<string, string> = {},
  ): Promise<Answer> => {
    const isJson =
      body !== undefined &&
      typeof body === 'object' &&
      !(body instanceof URLSearchParams) &&
      !(body instanceof FormData) &&
      !Buffer.isBuffer(body);
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
    const contentType = res.headers.get('content-type');
    // Every answer is checked against the OpenAPI document (see startIngest).
    await expectMatchesOpenApi(url, {
      method: 'POST',
      path: `/v1/f/${encodeURIComponent(slug)}`,
      status: res.status,
      contentType,
      body: /json/.test(contentType ?? '') ? parsed : text || undefined,
    });
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

export function slugOf(answer: Answer): string | undefined {
  return answer.body.type?.split('/').pop();
}

export async function submissionsOf(h: IngestHarness, formId: string) {
  return h.platform.db('submissions').where({ form_id: formId }).orderBy('id');
}
