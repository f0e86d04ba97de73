import { type Clock } from '@intake/shared/contracts';
import { buildServiceApp, type Worker } from '@intake/shared/runtime';
import {
  createTestPlatform,
  expectMatchesOpenApi,
  listen,
  registerOpenApi,
  type ConfigOverrides,
  type TestPlatform,
  startTestRelay,
} from '@intake/shared/testing';
import { openApi } from '@intake/management';
import { startUsageWorkers, usageService, type UsageWorkerOptions } from '../src';

/** A clock the test moves by hand, to cross month boundaries. */
export function manualClock(iso: string): Clock & { set(iso: string): void } {
  let now = new Date(iso);
  return { now: () => new Date(now), set: (next) => (now = new Date(next)) };
}

export interface UsageHarness {
  platform: TestPlatform;
  url: string;
  relay: { stop(): Promise<void>; drain(): Promise<number> };
  /** Starts the consumer and the mail retry timer (not started by default, so tests can act before it runs). */
  startWorkers(options?: UsageWorkerOptions): Promise<void>;
  close(): Promise<void>;
}

/** The usage app over real HTTP on a real platform, with an outbox relay as ingest runs one. */
export async function startUsage(
  options: { clock?: Clock; overrides?: ConfigOverrides; workers?: UsageWorkerOptions | false } = {},
): Promise<UsageHarness> {
  const platform = await createTestPlatform(options.overrides, { clock: options.clock });
  const server = await listen(buildServiceApp(usageService, platform).callback());
  registerOpenApi(server.url, openApi(platform));
  const relay = startTestRelay(platform);
  const workers: Worker[] = [];
  const harness: UsageHarness = {
    platform,
    url: server.url,
    relay,
    async startWorkers(workerOptions = {}) {
      workers.push(...(await startUsageWorkers(platform, { mailRetryMs: 200, ...workerOptions })));
    },
    async close() {
      await Promise.allSettled(workers.map((w) => w.stop()));
      await relay.stop();
      await server.close();
      await platform.close();
    },
  };
  if (options.workers !== false) await harness.startWorkers(options.workers || {});
  return harness;
}

/** Number of events of this run's consumer recorded in processed_events among `eventIds`. */
export async function processedCount(platform: TestPlatform, eventIds: string[]): Promise<number> {
  const row = await platform
    .db('processed_events')
    .where({ consumer: 'usage' })
    .whereIn('event_id', eventIds)
    .count<{ count: string }[]>('* as count')
    .first();
  return Number(row?.count ?? 0);
}

/** GETs a usage path; every answer is checked against the OpenAPI document (see startUsage). */
export function api(url: string, key?: string) {
  return async (path: string) => {
    const res = await fetch(`${url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    const text = await res.text();
    const type = res.headers.get('content-type');
    const body = text ? JSON.parse(text) : undefined;
    await expectMatchesOpenApi(url, { method: 'GET', path, status: res.status, contentType: type, body });
    return { status: res.status, type, body };
  };
}
