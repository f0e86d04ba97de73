import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ID_PREFIXES, type IdKind } from '@intake/shared/contracts';
import { createHttpServer } from '@intake/shared/http';
import { buildServiceApp, type ServiceModule } from '@intake/shared/runtime';
import { createTestPlatform, factories, type TestPlatform } from '@intake/shared/testing';
import { startTestPings } from '@intake/delivery';
import { routeFor } from '../../src/all-in-one';

/**
 * The services' apps behind one server routed as the ingress does, a webhook receiver answering 204, and a delivery
 * process's test pings (only those: nothing else may change the database between two fuzzed requests), on a platform
 * of their own over the same database and NATS prefix, so their queries are not counted as the requests'.
 */
export async function startServers(platform: TestPlatform, modules: ServiceModule[]) {
  const { DATABASE_URL, NATS_PREFIX, SECRETS_KEY, WEBHOOK_ALLOW_PRIVATE_NETWORKS } = platform.config;
  const delivery = await createTestPlatform({ DATABASE_URL, NATS_PREFIX, SECRETS_KEY, WEBHOOK_ALLOW_PRIVATE_NETWORKS });
  const pings = startTestPings(delivery);
  const apps = Object.fromEntries(modules.map((m) => [m.name, buildServiceApp(m, platform).callback()])) as Record<
    string,
    http.RequestListener
  >;
  const server = createHttpServer((req, res) => (apps[routeFor(req.url ?? '/')] as http.RequestListener)(req, res), {
    problemsUrl: platform.config.PROBLEMS_URL,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver = http.createServer((_req, res) => res.writeHead(204).end());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    receiverUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    /** Both servers closed, their open connections too (a fuzzed call may leave one open). */
    close: async () => {
      server.closeAllConnections();
      receiver.closeAllConnections();
      receiver.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pings.stop();
      await delivery.close();
    },
  };
}

/**
 * An account's resources for calls to name, made as an owner makes them: a form, a submission with a file, a
 * webhook to `receiverUrl` (over the API, so its secret is sealed as the API does) and the delivery of its test.
 */
export async function accountResources(
  platform: TestPlatform,
  url: string,
  receiverUrl: string,
  account: { id: string; managementKey: string },
) {
  const form = await factories.form(platform.db, account.id);
  const submission = await factories.submission(platform, {
    accountId: account.id,
    formId: form.id,
    payload: { name: 'Ada' },
    files: [{ field: 'cv', filename: 'cv.txt', contentType: 'text/plain', content: 'hello' }],
  });
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${account.managementKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, string>>);
  const webhook = await call('POST', `/v1/forms/${form.id}/webhooks`, { url: receiverUrl });
  await call('POST', `/v1/webhooks/${webhook['id']}/test`);
  const delivery = await platform.db('deliveries').where({ webhook_id: webhook['id'] }).first('id');
  return {
    account: account.id,
    form: form.id,
    submission: submission.id,
    file: submission.files[0]?.id,
    webhook: webhook['id'],
    delivery: delivery.id as string,
  };
}

const KIND_OF_PREFIX = Object.fromEntries(Object.entries(ID_PREFIXES).map(([k, p]) => [p, k])) as Record<
  string,
  IdKind
>;

/** The id kind an OpenAPI schema's pattern names (`^frm_…` → form), if it names one. */
export function kindOf(schema: { pattern?: string }): IdKind | undefined {
  const match = /^\^([a-z]+)_/.exec(schema.pattern ?? '');
  return match ? KIND_OF_PREFIX[match[1] as string] : undefined;
}
