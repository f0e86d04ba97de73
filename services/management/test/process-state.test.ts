import { FORM_CHANGED_SUBJECT } from '@intake/shared/messaging';
import { buildServiceApp, composeStandalone, type ServiceState, type Worker } from '@intake/shared/runtime';
import { createTestPlatform, listen, type TestPlatform } from '@intake/shared/testing';
import { ingestService } from '@intake/ingest';
import { managementService } from '../src';

/**
 * The management process serves the OpenAPI document of all four services from their route
 * definitions alone: it composes none of ingest's per-process state (committed-events publisher,
 * rate limiter, form-change subscription), which ingest's `compose` is the one way to make.
 */
describe('the management process', () => {
  let platform: TestPlatform;
  let workers: Worker[] = [];
  beforeEach(async () => {
    platform = await createTestPlatform();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.allSettled(workers.map((w) => w.stop()));
    workers = [];
    await platform.close();
  });

  const formChangeSubscriptions = (subscribe: jest.SpyInstance) =>
    subscribe.mock.calls.filter(([subject]) => subject === platform.nats.names.subject(FORM_CHANGED_SUBJECT));

  it('composes no ingest state, even to answer GET /openapi with ingest’s route', async () => {
    const subscribe = jest.spyOn(platform.nats.nc, 'subscribe');
    const composeIngest = jest.spyOn(ingestService, 'compose');
    const state: ServiceState = { draining: false };
    // What `node services/management/dist/main.js` runs: the app, the workers and the outbox relay.
    const management = await composeStandalone(managementService, platform, state);
    workers.push(...management.workers);
    const server = await listen(management.app.callback());
    try {
      const res = await fetch(`${server.url}/openapi`);
      expect(res.status).toBe(200);
      const doc = (await res.json()) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).toContain('/v1/f/{slug}');
    } finally {
      await server.close();
    }
    expect(composeIngest).not.toHaveBeenCalled();
    expect(formChangeSubscriptions(subscribe)).toEqual([]);
  });

  it('the same observation sees the ingest app compose its state, once per process', async () => {
    const subscribe = jest.spyOn(platform.nats.nc, 'subscribe');
    const composeIngest = jest.spyOn(ingestService, 'compose');
    buildServiceApp(ingestService, platform);
    workers.push(...(await ingestService.startWorkers(platform)));
    expect(composeIngest).toHaveBeenCalledTimes(1);
    expect(formChangeSubscriptions(subscribe)).toHaveLength(1);
  });
});
