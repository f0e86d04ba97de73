import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { eventually, factories, smtpSink, type SmtpSink } from '@intake/shared/testing';
import { startStack } from '../console/test/stack';

/**
 * Posted order is a property of the whole system: whatever names a form has, in whatever order, and
 * whichever body carries them, every output lists them as posted. Names are chosen to sort
 * differently as text, as numbers (which a JavaScript object would move first) and by length (which
 * jsonb would), and include names that mean something to JavaScript.
 */
const NAMES = ['b', 'a', '10', '9', '0', '2', 'aa', '_x', 'Z', 'é', 'ß', '日本', 'constructor', '__proto__', 'zz9'];
const nameLists = fc.uniqueArray(
  fc.oneof(fc.constantFrom(...NAMES), fc.stringMatching(/^[a-z0-9_]{1,4}$/), fc.nat({ max: 999 }).map(String)),
  { minLength: 2, maxLength: 8 },
);

/** The compact JSON text of fields in this order: what every JSON output must contain verbatim. */
const jsonOf = (fields: [string, string][]) =>
  `{${fields.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`).join(',')}}`;

type Body = 'urlencoded' | 'JSON' | 'multipart';
function bodyOf(kind: Body, fields: [string, string][]): { body: string | FormData; headers: Record<string, string> } {
  if (kind === 'JSON') return { body: jsonOf(fields), headers: { 'content-type': 'application/json' } };
  if (kind === 'urlencoded')
    return {
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    };
  const form = new FormData();
  for (const [name, value] of fields) form.append(name, value);
  return { body: form, headers: {} };
}

/** A webhook receiver that answers 500 to each delivery's first attempt and 200 after: every delivery is retried. */
async function failingOnceReceiver() {
  const bodies = new Map<string, string[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const delivery = String(req.headers['x-service-delivery']);
      const seen = bodies.get(delivery) ?? [];
      seen.push(Buffer.concat(chunks).toString('utf8'));
      bodies.set(delivery, seen);
      res.writeHead(seen.length === 1 ? 500 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Where a submission goes out: the stack, the management API as its owner, the webhook receiver, the mail server. */
interface Outputs {
  stack: Awaited<ReturnType<typeof startStack>>;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }>;
  receiver: Awaited<ReturnType<typeof failingOnceReceiver>>;
  smtp: SmtpSink;
}

describe('posted field order', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let receiver: Awaited<ReturnType<typeof failingOnceReceiver>>;
  let smtp: SmtpSink;
  let key: string;

  beforeAll(async () => {
    [receiver, smtp] = await Promise.all([failingOnceReceiver(), smtpSink()]);
    stack = await startStack({ SMTP_URL: smtp.url });
    key = (await factories.account(stack.platform.db)).managementKey;
  });
  afterAll(async () => {
    await stack?.close();
    await Promise.all([receiver?.close(), smtp?.close()]);
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, text: await res.text() };
  };

  it('is kept in the stored submission, the API, every webhook attempt and replay, both exports and the e-mail', async () => {
    await fc.assert(
      fc.asyncProperty(nameLists, async (names) => {
        const fields = names.map((name, i): [string, string] => [name, `value ${i}`]);
        await expectPostedOrderEverywhere({ stack, call, receiver, smtp }, fields);
      }),
      { numRuns: 6 },
    );
  }, 240_000);
});

/** One form, one post in each body type, then every output of the three submissions. */
async function expectPostedOrderEverywhere(t: Outputs, fields: [string, string][]): Promise<void> {
  const { stack, call, receiver, smtp } = t;
  const expected = jsonOf(fields);
  const form = JSON.parse(
    (
      await call('POST', '/v1/forms', {
        // Named for this run alone: the mails name the form, not the submission.
        name: `Order ${randomUUID().slice(0, 8)}`,
        notify_emails: ['owner@intake.example'],
        honeypot_field: 'hp-never-posted',
      })
    ).text,
  ) as { id: string; slug: string; name: string };
  const formName = form.name;
  await call('POST', `/v1/forms/${form.id}/webhooks`, { url: receiver.url });
  const ids: string[] = [];
  for (const kind of ['urlencoded', 'JSON', 'multipart'] as const) {
    const { body, headers } = bodyOf(kind, fields);
    const res = await fetch(`${stack.url}/v1/f/${form.slug}`, {
      method: 'POST',
      headers: { accept: 'application/json', ...headers },
      body,
    });
    expect({ kind, status: res.status }).toEqual({ kind, status: 201 });
    ids.push(((await res.json()) as { id: string }).id);
  }
  for (const id of ids) {
    const stored = await stack.platform
      .db('submissions')
      .where({ id })
      .first(stack.platform.db.raw('payload::text AS payload'));
    expect(stored.payload).toBe(expected);
    expect((await call('GET', `/v1/submissions/${id}`)).text).toContain(`"payload":${expected}`);
    await expectWebhookOrder(t, id, expected);
  }
  const csv = (await call('GET', `/v1/forms/${form.id}/export.csv`)).text;
  expect(csv.split('\r\n')[0]?.split(',').slice(6)).toEqual(fields.map(([name]) => csvHeaderCell(name)));
  const ndjson = (await call('GET', `/v1/forms/${form.id}/export.ndjson`)).text.trim().split('\n');
  expect(ndjson).toHaveLength(3);
  for (const line of ndjson) expect(line).toContain(`"payload":${expected}`);
  const mails = await eventually(
    () => {
      const found = smtp.mails.filter((m) => m.subject.includes(formName));
      return found.length === ids.length ? found : undefined;
    },
    { message: `the ${ids.length} mails of ${formName}` },
  );
  for (const mail of mails) {
    const listed = mail.text.split('\n').flatMap((line) => /^(.*): value \d+$/.exec(line)?.slice(1, 2) ?? []);
    expect(listed).toEqual(fields.map(([name]) => name));
  }
}

/** The first attempt (refused), its retry, and a manual replay all carry the payload as posted. */
async function expectWebhookOrder(t: Outputs, submissionId: string, expected: string): Promise<void> {
  const { call, receiver } = t;
  const delivery = await eventually(
    async () => {
      const list = JSON.parse((await call('GET', `/v1/submissions/${submissionId}/deliveries`)).text) as {
        data: { id: string; status: string }[];
      };
      return list.data.find((d) => d.status === 'succeeded');
    },
    { message: `the delivery of ${submissionId} succeeded after its retry` },
  );
  expect((await call('POST', `/v1/deliveries/${delivery.id}/replay`)).status).toBeLessThan(300);
  const bodies = await eventually(
    () => {
      const seen = receiver.bodies.get(delivery.id) ?? [];
      return seen.length >= 3 && seen;
    },
    { message: 'first attempt, retry and replay received' },
  );
  for (const body of bodies) expect(body).toContain(`"payload":${expected}`);
}

/** A header cell as the CSV writes a name: quoted when it must be (none of the generated names need it) and formula-guarded. */
function csvHeaderCell(name: string): string {
  return /^[=+\-@\t\r]/.test(name) ? `'${name}` : name;
}
