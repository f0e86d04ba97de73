import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildServiceApp, type ServiceModule, type Worker } from '@intake/shared/runtime';
import { createTestPlatform, startTestRelay, type ConfigOverrides, type TestPlatform } from '@intake/shared/testing';
import { ingestService } from '@intake/ingest';
import { managementService } from '@intake/management';
import { deliveryService } from '@intake/delivery';
import { usageService } from '@intake/usage';

/** The built console (console/dist), which management serves at /console. */
export const CONSOLE_INDEX = path.resolve(__dirname, '../dist/index.html');

/**
 * The whole stack in this process on one loopback port, routed as the ingress routes it (`/v1/f/*`
 * ingest, `/v1/usage` usage, the rest management), with every worker and the outbox relay running,
 * on a real test platform whose PUBLIC_BASE_URL is this server's own address (with `overrides` to its config); the
 * workers of the services named in `without` are not started (a test runs them as processes of their own).
 */
export async function startStack(
  overrides: ConfigOverrides = {},
  options: { without?: ServiceModule['name'][] } = {},
): Promise<{ url: string; platform: TestPlatform; close(): Promise<void> }> {
  if (!existsSync(CONSOLE_INDEX))
    throw new Error('The console is not built: run `npm run build -w console` (npm test builds it)');
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const platform = await createTestPlatform({
    PUBLIC_BASE_URL: url,
    WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms',
    WEBHOOK_TIMEOUT_MS: 3000,
    ...overrides,
  });
  const modules: Record<ServiceModule['name'], ServiceModule> = {
    ingest: ingestService,
    management: managementService,
    delivery: deliveryService,
    usage: usageService,
  };
  const apps = Object.fromEntries(
    Object.entries(modules).map(([name, m]) => [name, buildServiceApp(m, platform).callback()]),
  ) as unknown as Record<ServiceModule['name'], http.RequestListener>;
  const workers: Worker[] = [];
  for (const m of Object.values(modules))
    if (!options.without?.includes(m.name)) workers.push(...(await m.startWorkers(platform)));
  workers.push(startTestRelay(platform, 100));
  handler = (req, res) => {
    const p = req.url ?? '/';
    const name = p.startsWith('/v1/f/') ? 'ingest' : /^\/v1\/usage(?:[/?]|$)/.test(p) ? 'usage' : 'management';
    apps[name](req, res);
  };
  return {
    url,
    platform,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled(workers.map((w) => w.stop()));
      await platform.close();
    },
  };
}
