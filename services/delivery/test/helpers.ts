import { execFile } from 'node:child_process';
import type http from 'node:http';
import {
  enqueueEvent,
  newId,
  SUBJECTS,
  type Platform,
  type StoredFile,
  type SubmissionEvent,
  type Worker,
} from '@intake/shared';
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

/** An account with one form (and its notification addresses). */
export async function accountWithForm(platform: Platform, notifyEmails: string[] = []) {
  const account = await factories.account(platform.db);
  const form = await factories.form(platform.db, account.id, { notify_emails: notifyEmails });
  return { accountId: account.id, formId: form.id, managementKey: account.managementKey };
}

/**
 * Stores a submission and enqueues its event as ingest does; `subject` and `rowStatus` let tests
 * publish inconsistent events; `omitPayload` sends the event without the fields, as ingest does
 * for a post too large for a message.
 */
export async function submit(
  platform: Platform,
  props: {
    accountId: string;
    formId: string;
    payload?: Record<string, string>;
    files?: StoredFile[];
    status?: 'received' | 'spam';
    subject?: string;
    rowStatus?: 'received' | 'spam';
    omitPayload?: boolean;
  },
): Promise<SubmissionEvent> {
  const submissionId = newId('submission');
  const payload = props.payload ?? { name: 'Ada', message: 'Hello' };
  const status = props.status ?? 'received';
  const receivedAt = new Date();
  let event!: SubmissionEvent;
  await platform.db.transaction(async (trx) => {
    await trx('submissions').insert({
      id: submissionId,
      account_id: props.accountId,
      form_id: props.formId,
      status: props.rowStatus ?? status,
      payload: JSON.stringify(payload),
      file_count: props.files?.length ?? 0,
      received_at: receivedAt,
    });
    const body = {
      submission_id: submissionId,
      form_id: props.formId,
      account_id: props.accountId,
      status,
      received_at: receivedAt.toISOString(),
      ...(props.omitPayload ? { payload: {}, payload_omitted: true as const } : { payload }),
      files: props.files ?? [],
      file_bytes: 0,
      form_name: 'Test form',
    };
    const eventId = await enqueueEvent(trx, {
      subject: props.subject ?? (status === 'spam' ? SUBJECTS.submissionSpam : SUBJECTS.submissionCreated),
      payload: body,
    });
    event = { event_id: eventId, ...body };
  });
  return event;
}

/** Verifies `x-service-signature` with @octokit/webhooks-methods (ESM only, so in a child Node process). */
export function verifyWithOctokit(secret: string, body: string, signature: string): Promise<boolean> {
  const script = `import { verify } from '@octokit/webhooks-methods';
let input = ''; process.stdin.on('data', (c) => (input += c)); process.stdin.on('end', async () => {
  const { secret, body, signature } = JSON.parse(input);
  process.stdout.write(String(await verify(secret, body, signature)));
});`;
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: __dirname },
      (err, stdout) => (err ? reject(err) : resolve(stdout.trim() === 'true')),
    );
    child.stdin?.end(JSON.stringify({ secret, body, signature }));
  });
}
