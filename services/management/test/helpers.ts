import { createMailer } from '@intake/shared/base';
import { type Clock } from '@intake/shared/contracts';
import { buildServiceApp, type Worker } from '@intake/shared/runtime';
import {
  createTestPlatform,
  expectMatchesOpenApi,
  factories,
  listen,
  smtpSink,
  startTestRelay,
  type ConfigOverrides,
  type TestPlatform,
} from '@intake/shared/testing';
import { deliveryService } from '@intake/delivery';
import { managementService } from '../src';
import { receiver } from '../../delivery/test/helpers';

/** The management app over real HTTP on a real platform. */
export async function startManagement(
  overrides: ConfigOverrides = {},
): Promise<{ platform: TestPlatform; url: string; close(): Promise<void> }> {
  const platform = await createTestPlatform(overrides);
  const server = await listen(buildServiceApp(managementService, platform).callback());
  return {
    platform,
    url: server.url,
    async close() {
      await server.close();
      await platform.close();
    },
  };
}

/** Management mailing to an SMTP sink (`smtp`): invitations, password resets. */
export async function startManagementWithSmtp(overrides: ConfigOverrides = {}) {
  const smtp = await smtpSink();
  const started = await startManagement({ SMTP_URL: smtp.url, ...overrides });
  return {
    ...started,
    smtp,
    async close() {
      await started.close();
      await smtp.close();
    },
  };
}

/**
 * Management and the delivery workers on one platform (webhook retries every `retryMs`, the outbox relay polling
 * every `pollMs`; `overrides` and `clock` as createTestPlatform takes them); private networks are allowed in tests, so
 * local receivers work.
 */
export async function startManagementWithWorkers(
  options: { retryMs: number; pollMs: number },
  overrides: ConfigOverrides = {},
  clock?: Clock,
) {
  const platform: TestPlatform = await createTestPlatform(
    { WEBHOOK_RETRY_SCHEDULE: Array(4).fill(`${options.retryMs}ms`).join(','), WEBHOOK_TIMEOUT_MS: 2000, ...overrides },
    { clock },
  );
  const server = await listen(buildServiceApp(managementService, platform).callback());
  const workers: Worker[] = [
    ...(await deliveryService.startWorkers(platform)),
    startTestRelay(platform, options.pollMs),
  ];
  return {
    platform,
    url: server.url,
    async close() {
      await server.close();
      await Promise.allSettled(workers.map((w) => w.stop()));
      await platform.close();
    },
  };
}

/**
 * Management and the delivery workers (as startManagementWithWorkers) mailing to an SMTP sink, on a clock the test
 * moves (`clock.offsetMs`, for windows and due times); `mailer` sends as the delivery workers do, `mailsTo(address)` is
 * what the sink took for an address.
 */
export async function startManagementWithMail() {
  const smtp = await smtpSink();
  const clock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };
  const started = await startManagementWithWorkers(
    { retryMs: 300, pollMs: 100 },
    { SMTP_URL: smtp.url, MAIL_FROM: 'Intake <no-reply@intake.test>' },
    clock,
  );
  const mailer = createMailer(started.platform.config, started.platform.logger);
  return {
    ...started,
    smtp,
    clock,
    mailer,
    mailsTo: (address: string) => smtp.mails.filter((m) => m.to.includes(address)),
    async close() {
      mailer.close();
      await started.close();
      await smtp.close();
    },
  };
}

/** A new account with one form, and an API caller with the account's management key. */
export async function newOwner(ctx: { platform: TestPlatform; url: string }) {
  const account = await factories.account(ctx.platform.db);
  const form = await factories.form(ctx.platform.db, account.id);
  return { accountId: account.id, formId: form.id, call: api(ctx.url, account.managementKey) };
}

/** A webhook receiver that answers 500 `boom` until `heal()`, then 200 `ok`. */
export async function failingReceiver() {
  let healthy = false;
  const target = await receiver((_req, _n, res) => {
    res.statusCode = healthy ? 200 : 500;
    res.end(healthy ? 'ok' : 'boom');
  });
  return { ...target, heal: () => void (healthy = true) };
}

/** A new owner whose form has a webhook to a new `failingReceiver` (the test closes `target`). */
export async function ownerWithFailingHook(ctx: { platform: TestPlatform; url: string }) {
  const target = await failingReceiver();
  const owner = await newOwner(ctx);
  const { body: hook } = await owner.call('POST', `/v1/forms/${owner.formId}/webhooks`, { url: target.url });
  return { ...owner, target, hook };
}

/**
 * Calls the API with an optional key. Every response is checked against the served OpenAPI
 * document (status documented, content type listed, JSON body fits the schema): pass
 * `{ contract: false }` only for a response that is deliberately outside it.
 */
export function api(url: string, key?: string, options: { contract?: boolean } = {}) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    const contentType = res.headers.get('content-type');
    const parsed =
      text && /json/.test(contentType ?? '') && !/ndjson/.test(contentType ?? '')
        ? JSON.parse(text)
        : text || undefined;
    if (options.contract !== false)
      await expectMatchesOpenApi(url, { method, path, status: res.status, contentType, body: parsed });
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

type SubmissionProps = Omit<Parameters<typeof factories.submission>[1], 'accountId' | 'formId'>;

/**
 * A fresh account with one form (`row`: what its factory sets, `settings`: what is then PATCHed through the API, the
 * answer being `patched`), a caller holding its management key, and `submit` storing a post to the form.
 */
export async function ownerWithForm(
  ctx: { platform: TestPlatform; url: string },
  options: { row?: Parameters<typeof factories.form>[2]; settings?: Record<string, unknown> } = {},
) {
  const account = await factories.account(ctx.platform.db);
  const form = await factories.form(ctx.platform.db, account.id, options.row);
  const call = api(ctx.url, account.managementKey);
  const patched = options.settings && (await call('PATCH', `/v1/forms/${form.id}`, options.settings));
  if (patched) expect(patched.status).toBe(200);
  const submit = (props: SubmissionProps = {}) =>
    factories.submission(ctx.platform, { accountId: account.id, formId: form.id, ...props });
  return { account, form, call, submit, patched: patched?.body };
}
