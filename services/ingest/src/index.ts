import { zeroSubmissionOutcomes } from '@intake/shared/telemetry';
import { type Platform, type ServiceModule } from '@intake/shared/runtime';
import { composeIngest, type IngestDeps, type IngestOptions } from './compose';
import { ingestRoutes } from './routes/ingest.routes';
import { submissionMetrics } from './answer/answer';

export { composeIngest, type IngestDeps, type IngestOptions } from './compose';

/**
 * The ingest service (`POST /v1/f/:slug`) of one process. Its routes are values; its per-process
 * state (`IngestDeps`: form cache, group writer, rate limiter, committed-events publisher, the
 * subscription to form changes, unsettled files) is composed once per process, when its app is
 * built or its workers start there (whichever comes first), and handed to the route handlers and
 * to the shutdown worker; on another platform (tests, one after another), it composes afresh. A
 * test that needs the state calls `deps(platform)` (the state last composed on that platform).
 */
export function createIngestService(
  options: IngestOptions = {},
): ServiceModule<IngestDeps> & { deps(platform: Platform): IngestDeps } {
  let composed: IngestDeps | undefined;
  const compose = (platform: Platform): IngestDeps =>
    composed?.platform === platform ? composed : (composed = composeIngest(platform, options));
  return {
    name: 'ingest',
    publishesEvents: true,
    cors: true,
    deps(platform) {
      if (composed?.platform !== platform) throw new Error('no ingest app was built on this platform');
      return composed;
    },
    routes: () => ingestRoutes,
    compose,
    // On shutdown: the events in flight published, then one last try at the files of posts of
    // unknown outcome (those not settled stay in storage).
    startWorkers: async (platform) => {
      const { unsettled, formChanges, events, limiter } = compose(platform);
      // The SDK has started by now (the app may be built before it is).
      zeroSubmissionOutcomes();
      return [
        {
          async stop() {
            formChanges.stop();
            await events?.stop();
            await unsettled.settle(0);
            unsettled.stop();
            await limiter.stop();
          },
        },
      ];
    },
    // Before the router, inside the problem middleware: submissions by outcome and ingest latency.
    extend: (app) => void app.use(submissionMetrics),
  };
}

export const ingestService = createIngestService();
