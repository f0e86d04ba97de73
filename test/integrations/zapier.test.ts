import { spawnSync } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { eventually, factories } from '@intake/shared/testing';
import { startStack } from '../../console/test/stack';

/**
 * The Zapier app (integrations/zapier), checked by Zapier's own CLI and run by Zapier's own app tester against the
 * real stack: its authentication, its form list, the REST hook's subscribe, a delivery turned into the Zap's data,
 * the polling fallback agreeing with it, and unsubscribe.
 */
const APP_DIR = path.resolve(__dirname, '../../integrations/zapier');
// Zapier's packages are CommonJS, and the app is plain JavaScript: loaded as Zapier loads them.
/* eslint-disable @typescript-eslint/no-require-imports */
const zapier = require('zapier-platform-core') as {
  createAppTester(app: unknown): (method: unknown, bundle: Record<string, unknown>) => Promise<unknown>;
};
const App = require(APP_DIR) as {
  authentication: { test: unknown };
  triggers: Record<string, { operation: Record<string, unknown> }>;
};
/* eslint-enable @typescript-eslint/no-require-imports */
const appTester = zapier.createAppTester(App);
const hook = App.triggers['new_submission']!.operation;

const t = {} as {
  stack: Awaited<ReturnType<typeof startStack>>;
  key: string;
  hooks: { body: string; headers: http.IncomingHttpHeaders }[];
  server: http.Server;
  url: string;
};

beforeAll(async () => {
  t.stack = await startStack();
  t.key = (await factories.account(t.stack.platform.db, { name: 'Acme' })).managementKey;
  t.hooks = [];
  // Zapier's side of a REST hook: the URL it subscribes, which takes what Intake posts.
  t.server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      t.hooks.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.end('{"status":"success"}');
    });
  });
  await new Promise<void>((resolve) => t.server.listen(0, '127.0.0.1', resolve));
  t.url = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}/hooks/standard/1/abc`;
});
afterAll(async () => {
  // Zapier's platform patches Node's http modules for its logs unless the app says not to; left patched, they broke
  // the raw requests of the next test files in this Jest worker.
  expect([http, https].map((m) => (m as { patchedByZapier?: boolean }).patchedByZapier)).toEqual([
    undefined,
    undefined,
  ]);
  await t.stack?.close();
  await new Promise((resolve) => t.server?.close(resolve));
});

describe('the Zapier app', () => {
  it('passes zapier validate', () => {
    const cli = require.resolve('zapier-platform-cli/src/bin/run');
    const run = spawnSync(process.execPath, [cli, 'validate', '--without-style'], {
      cwd: APP_DIR,
      env: { ...process.env, DISABLE_ZAPIER_ANALYTICS: '1', NO_UPDATE_NOTIFIER: '1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: run.status, out: run.stdout }).toEqual({
      status: 0,
      out: expect.stringContaining('This project is structurally sound!'),
    });
  });

  it('authenticates with a management key, and refuses another', async () => {
    const auth = { authData: { base_url: `${t.stack.url}/`, api_key: t.key } };
    expect(await appTester(App.authentication.test, auth)).toMatchObject({ name: 'Acme' });
    const wrong = { authData: { base_url: t.stack.url, api_key: 'sk_live_not_a_key' } };
    await expect(appTester(App.authentication.test, wrong)).rejects.toThrow(
      'Intake refused the management key: The API key is not valid',
    );
  });

  it('subscribes a form, turns a signed delivery into the Zap’s data as the polling fallback does (a forged, replayed or secret-less one into nothing), and unsubscribes', async () => {
    const authData = { base_url: t.stack.url, api_key: t.key };
    const make = async (path: string, body: object) => {
      const res = await fetch(`${t.stack.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as { id: string; slug: string };
    };
    // A client's form, beside the agency's own of the same name: the Form list tells them apart by the client.
    const client = await make('/v1/projects', { name: 'Acme Dental' });
    const form = await make('/v1/forms', { name: 'Contact', project_id: client.id });
    const own = await make('/v1/forms', { name: 'Contact' });
    const forms = (await appTester(App.triggers['form']!.operation['perform'], { authData })) as { id: string }[];
    expect(forms).toContainEqual({ id: form.id, name: 'Contact — Acme Dental' });
    expect(forms).toContainEqual({ id: own.id, name: 'Contact' });

    const inputData = { form_id: form.id };
    const subscribed = (await appTester(hook['performSubscribe'], { authData, inputData, targetUrl: t.url })) as {
      id: string;
      secret: string;
    };
    expect(subscribed).toEqual({ id: expect.stringMatching(/^wh_/), secret: expect.stringMatching(/^whsec_/) });
    const posted = await fetch(`${t.stack.url}/v1/f/${form.slug}`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Ada&email=ada%40example.com',
    });
    const { id } = (await posted.json()) as { id: string };
    const delivered = await eventually(() => t.hooks.find((h) => h.body.includes(id)), {
      message: 'the delivery to Zapier',
    });
    const { fromHook } = await hookRequests({ authData, inputData, subscribed, delivered, id, formId: form.id });
    expect(fromHook[0]).toMatchObject({ project_id: client.id, project_name: 'Acme Dental' });
    const listed = (await appTester(hook['performList'], { authData, inputData })) as Record<string, unknown>[];
    expect(listed[0]).toEqual(fromHook[0]);

    await appTester(hook['performUnsubscribe'], { authData, inputData, subscribeData: subscribed });
    const gone = await fetch(`${t.stack.url}/v1/webhooks/${subscribed.id}`, {
      headers: { authorization: `Bearer ${t.key}` },
    });
    expect(gone.status).toBe(404);
  });
});

/**
 * A delivery handed to the trigger as Zapier hands a hook's request (parsed, and raw with its headers named its way):
 * the genuine one triggers; forged, tampered, replayed (signed six minutes ago by the Standard Webhooks library) and
 * secret-less ones trigger nothing.
 */
async function hookRequests(p: {
  authData: object;
  inputData: object;
  subscribed: { id: string; secret: string };
  delivered: { body: string; headers: http.IncomingHttpHeaders };
  id: string;
  formId: string;
}) {
  const { authData, inputData, subscribed, delivered, id } = p;
  // As Zapier hands a hook's request to the trigger: parsed, and raw with its headers named its way.
  const zapierNamed = (headers: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [`Http-${k.replace(/(^|-)\w/g, (c) => c.toUpperCase())}`, v]),
    );
  const request = (headers: Record<string, unknown>, body = delivered.body, subscribeData: object = subscribed) => ({
    authData,
    inputData,
    subscribeData,
    cleanedRequest: JSON.parse(body),
    rawRequest: { content: body, headers: zapierNamed(headers) },
  });
  const fromHook = (await appTester(hook['perform'], request(delivered.headers))) as { id: string }[];
  expect(fromHook).toEqual([
    expect.objectContaining({ id, form_id: p.formId, field__name: 'Ada', field__email: 'ada@example.com' }),
  ]);
  const forged = { ...delivered.headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };
  expect(await appTester(hook['perform'], request(forged))).toEqual([]);
  const tampered = delivered.body.replace('Ada', 'Eve');
  expect(await appTester(hook['perform'], request(delivered.headers, tampered))).toEqual([]);
  // The same request caught and sent again later: signed (by the Standard Webhooks library) six minutes ago.
  const webhookId = String(delivered.headers['webhook-id']);
  const signedAgo = (minutes: number) => {
    const at = new Date(Date.now() - minutes * 60_000);
    const signature = new Webhook(subscribed.secret).sign(webhookId, at, delivered.body);
    return {
      'webhook-id': webhookId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    };
  };
  expect(await appTester(hook['perform'], request(signedAgo(1)))).toHaveLength(1);
  expect(await appTester(hook['perform'], request(signedAgo(6)))).toEqual([]);
  // A subscription without a stored secret accepts nothing, however the request is signed.
  expect(await appTester(hook['perform'], request(delivered.headers, delivered.body, { id: subscribed.id }))).toEqual(
    [],
  );
  return { fromHook };
}
