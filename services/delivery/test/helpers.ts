import type http from 'node:http';
import { newId, type StoredFile, type SubmissionEvent, type SubmissionStatus } from '@intake/shared/contracts';
import { type Platform, type Worker } from '@intake/shared/runtime';
import {
  createTestPlatform,
  factories,
  listen,
  type ConfigOverrides,
  type TestPlatform,
  startTestRelay,
} from '@intake/shared/testing';
import { deliveryService } from '../src';

/** A real platform with the delivery workers and an outbox relay running. */
export async function startDelivery(
  overrides: ConfigOverrides = {},
): Promise<{ platform: TestPlatform; close(): Promise<void> }> {
  const platform = await createTestPlatform(overrides);
  const workers: Worker[] = await deliveryService.startWorkers(platform);
  workers.push(startTestRelay(platform, 200));
  return {
    platform,
    async close() {
      await Promise.allSettled(workers.map((w) => w.stop()));
      await platform.close();
    },
  };
}

export interface Received {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  url: string;
}

/** A real HTTP receiver on loopback that records every request; `respond` decides each answer (default 200). */
export async function receiver(
  respond: (req: Received, n: number, res: http.ServerResponse) => void = (_r, _n, res) => res.end('ok'),
) {
  const requests: Received[] = [];
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: Received = {
        at: Date.now(),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        url: req.url ?? '/',
      };
      requests.push(received);
      respond(received, requests.length, res);
    });
  });
  return { ...server, requests };
}

/** A `receiver` answer: every request gets `status` and `body`. */
export function answering(status: number, body = ''): (req: Received, n: number, res: http.ServerResponse) => void {
  return (_req, _n, res) => {
    res.statusCode = status;
    res.end(body);
  };
}

/** A `receiver` answer: 500 to the first `failures` requests, 204 after. */
export function failingFirst(failures: number): (req: Received, n: number, res: http.ServerResponse) => void {
  return (_req, n, res) => {
    res.statusCode = n <= failures ? 500 : 204;
    res.end();
  };
}

/** An account with one form (and its notification addresses). */
export async function accountWithForm(platform: Platform, notifyEmails: string[] = []) {
  const account = await factories.account(platform.db);
  const form = await factories.form(platform.db, account.id, { notify_emails: notifyEmails });
  return { accountId: account.id, formId: form.id, managementKey: account.managementKey };
}

/** An account with one form (as `accountWithForm`) and one webhook of the form (`url`, and what else is given). */
export async function formWithHook(
  platform: Platform,
  webhook: Omit<Parameters<typeof factories.webhook>[1], 'accountId' | 'formId'>,
) {
  const owner = await accountWithForm(platform);
  const hook = await factories.webhook(platform, { accountId: owner.accountId, formId: owner.formId, ...webhook });
  return { ...owner, hook };
}

/**
 * A submission stored as ingest stores it (`factories.submission`), and its event; `subject` and
 * `rowStatus` let tests publish inconsistent events; `omitPayload` sends the event without the
 * fields, as ingest does for a post too large for a message.
 */
export async function submit(
  platform: Platform,
  props: {
    accountId: string;
    formId: string;
    payload?: Record<string, string>;
    files?: StoredFile[];
    status?: SubmissionStatus;
    subject?: string;
    rowStatus?: SubmissionStatus;
    omitPayload?: boolean;
  },
): Promise<SubmissionEvent> {
  const { subject, rowStatus, files, ...rest } = props;
  const stored = await factories.submission(platform, {
    ...rest,
    files: files?.map(({ content_type, ...f }) => ({ ...f, contentType: content_type })),
    rewrite(item) {
      if (subject) item.event.subject = subject;
      if (rowStatus) item.row.status = rowStatus;
    },
  });
  return stored.event;
}

/** Verifies `x-service-signature` with @octokit/webhooks-methods (GitHub's check of the same scheme). */
export async function verifyWithOctokit(secret: string, body: string, signature: string): Promise<boolean> {
  const { verify } = (await import('@octokit/webhooks-methods')) as Octokit;
  return verify(secret, body, signature);
}
type Octokit = typeof import('@octokit/webhooks-methods', { with: { 'resolution-mode': 'import' } });

/**
 * A received submission stored without its event (not through the outbox, so the running service never sees it), and
 * the event the outbox would have published, its fields in it.
 */
export async function storedWithoutEvent(
  platform: Platform,
  form: { accountId: string; formId: string },
  payload: Record<string, string> = { name: 'Ada' },
): Promise<SubmissionEvent> {
  const event: SubmissionEvent = {
    event_id: newId('event'),
    submission_id: newId('submission'),
    form_id: form.formId,
    account_id: form.accountId,
    status: 'received',
    received_at: new Date().toISOString(),
    payload,
    files: [],
    file_bytes: 0,
    form_name: 'Test form',
  };
  await platform.db('submissions').insert({
    id: event.submission_id,
    account_id: event.account_id,
    form_id: event.form_id,
    status: 'received',
    payload: JSON.stringify(payload),
    received_at: event.received_at,
  });
  return event;
}
