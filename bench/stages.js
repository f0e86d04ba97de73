/**
 * The pipeline with every stage on a thread of its own, for the `pipeline` suite's CPU per stage:
 * ingest's routes and workers on the main thread (as in `npm start`), and one thread each for the
 * outbox relay, delivery's fan-out, send and mail consumers, and usage's consumer
 * (`bench/stage-thread.js`), each with its own Postgres pool (`application_name`
 * `intake-stage-<stage>`) and NATS connection. A measuring layout, not a way to run Intake: the
 * stages pay for more connections and threads than `npm start` does.
 */
require('@intake/shared/register');
const path = require('node:path');
const { buildServiceApp, createPlatform, serve, startBackgroundThread } = require('@intake/shared/runtime');
const { loadConfig } = require('@intake/shared/base');
const { ingestService } = require('@intake/ingest');

const STAGES = ['relay', 'fan-out', 'send', 'mail', 'usage'];

async function main() {
  const config = loadConfig(process.env);
  const platform = await createPlatform(config, { service: 'stage-ingest' });
  const state = { draining: false };
  const app = buildServiceApp(ingestService, platform, state);
  const workers = [...(await ingestService.startWorkers(platform))];
  for (const stage of STAGES)
    workers.push(
      await startBackgroundThread({
        entry: path.join(__dirname, 'stage-thread.js'),
        service: `stage-${stage}`,
        logger: platform.logger,
      }),
    );
  await serve({ platform, handler: app.callback(), workers, port: config.PORT, state, name: 'stages' });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
