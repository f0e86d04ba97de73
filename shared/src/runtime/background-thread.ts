import { hostname } from 'node:os';
import {
  isMainThread,
  MessageChannel,
  parentPort,
  Worker as Thread,
  workerData,
  type MessagePort,
} from 'node:worker_threads';
import { loadConfig } from '../base/config';
import type { Logger } from '../base/logger';
import { closePlatform, createPlatform, type Platform, type Worker } from './platform';
import { serviceNameFromEntry, servesPrometheus, startTelemetry } from '../telemetry/sdk';
import { collectFromThread } from '../telemetry/thread-metrics';

/** What the main thread tells its background thread. */
type ToThread = 'stop';
interface ThreadData {
  service: string;
  /** Where the main thread asks for the thread's metrics, when it serves METRICS_PORT (telemetry/sdk.ts reads it). */
  metricsPort?: MessagePort;
}

/** How long a stopping thread may take to finish what it holds before it is terminated. */
const STOP_TIMEOUT_MS = 30_000;

/**
 * Runs background work of the all-in-one process (the outbox relay; the consumers and sweepers
 * of management, delivery and usage) on a thread of its own, so that it uses a second core while
 * the main thread answers HTTP. `entry` is a compiled module that calls `runBackgroundThread`;
 * the thread builds its own platform (database pool, NATS and Redis connections) from the same
 * environment, with `application_name` `intake-<service>`. (A service run alone keeps its relay on its main thread: measured, a relay
 * thread made the ingest process slower; see docs/decisions/operations.md#processes-and-threads.)
 *
 * - Resolves once the thread's workers have started; a thread that cannot start rejects.
 * - `stop()` lets the thread finish what its workers hold and close its platform.
 * - A thread that dies takes the process with it (exit 1), as a crash of the process would: JetStream
 *   redelivers what it held, Postgres leases expire, and the orchestrator restarts the process.
 */
export async function startBackgroundThread(options: {
  entry: string;
  service: string;
  logger: Logger;
  /** The thread's environment (default: this process's), from which it builds its platform. */
  env?: NodeJS.ProcessEnv;
  /** The thread's name in its telemetry (`intake.thread`, and the suffix of its instance id; default `background`). */
  thread?: string;
}): Promise<Worker> {
  const { logger } = options;
  const env = options.env ?? process.env;
  // The thread's metrics reach this process's one /metrics (METRICS_PORT) through its main thread.
  const metrics = servesPrometheus(env) ? new MessageChannel() : undefined;
  const thread = new Thread(options.entry, {
    workerData: {
      service: options.service,
      ...(metrics ? { metricsPort: metrics.port2 } : {}),
    } satisfies ThreadData,
    transferList: metrics ? [metrics.port2] : [],
    env: threadEnv(env, options.thread ?? 'background'),
  });
  const stopCollecting = metrics ? collectFromThread(metrics.port1) : () => undefined;
  await new Promise<void>((resolve, reject) => {
    thread.once('message', () => resolve());
    thread.once('error', reject);
    thread.once('exit', (code) => reject(new Error(`the background thread exited with ${code} before it started`)));
  }).catch((err: unknown) => {
    stopCollecting();
    throw err;
  });
  thread.removeAllListeners();
  let stopping = false;
  thread.on('error', (err) => {
    // While stopping, the thread's error (closing a connection, say) does not end the main thread's drain.
    if (stopping) return void logger.error({ err }, 'the background thread failed while stopping');
    logger.fatal({ err }, 'the background thread failed: exiting');
    process.exit(1);
  });
  thread.on('exit', (code) => {
    if (stopping) return;
    logger.fatal({ code }, 'the background thread stopped: exiting');
    process.exit(1);
  });
  return {
    async stop() {
      if (stopping) return;
      stopping = true;
      const exited = new Promise((resolve) => thread.once('exit', resolve));
      thread.postMessage('stop' satisfies ToThread);
      const timer = setTimeout(() => void thread.terminate(), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
      stopCollecting();
    },
  };
}

/**
 * The thread's telemetry has the process's service name and an instance of its own
 * (`service.instance.id`: the process's, else `<host>-<pid>`, plus `-<name>`; and
 * `intake.thread=<name>`), so that its metrics pushed over OTLP never add to the same series as another thread's.
 * It opens no METRICS_PORT of its own (the main thread's has the port, and serves the thread's metrics with its own).
 */
function threadEnv(env: NodeJS.ProcessEnv, name: string): NodeJS.ProcessEnv {
  const { METRICS_PORT: _served, ...rest } = env;
  const attributes = (env['OTEL_RESOURCE_ATTRIBUTES'] ?? '').split(',').filter((a) => a.includes('='));
  const instance = attributes
    .find((a) => a.trim().startsWith('service.instance.id='))
    ?.split('=')[1]
    ?.trim();
  const kept = attributes.filter((a) => !a.trim().startsWith('service.instance.id='));
  return {
    ...rest,
    OTEL_SERVICE_NAME: env['OTEL_SERVICE_NAME'] ?? serviceNameFromEntry(process.argv[1]),
    OTEL_RESOURCE_ATTRIBUTES: [
      ...kept,
      `service.instance.id=${instance || `${hostname()}-${process.pid}`}-${name}`,
      `intake.thread=${name}`,
    ].join(','),
  };
}

/**
 * The body of a background thread's entry module: builds the thread's platform, starts `start`'s
 * workers, then follows the main thread's stop (see `startBackgroundThread`).
 * An error while starting ends the thread, and the main thread's start with it.
 */
export function runBackgroundThread(start: (platform: Platform) => Promise<Worker[]>): void {
  const port = parentPort;
  if (isMainThread || !port) throw new Error('runBackgroundThread runs in a thread of startBackgroundThread');
  const { service } = workerData as ThreadData;
  void (async () => {
    // A thread's entry, like main.ts, reads the environment (the main thread's, passed on).
    const platform = await createPlatform(loadConfig(process.env), { service });
    const workers = await start(platform);
    let stopping: Promise<void> | undefined;
    port.on('message', (message: ToThread) => {
      if (message !== 'stop') return;
      stopping ??= (async () => {
        await Promise.allSettled(workers.map((w) => w.stop()));
        await closePlatform(platform).catch((err) => platform.logger.warn({ err }, 'closing the thread’s platform'));
        // The SDK `register` started in this thread: flush its spans and metrics.
        await startTelemetry({ serviceName: service, env: process.env }).shutdown();
      })().finally(() => {
        // Ends this thread only (not the process), whatever handle is still open.
        process.exit(0);
      });
    });
    port.postMessage('ready');
  })().catch((err: unknown) => {
    // Rethrown outside the promise: an uncaught error ends the thread with an 'error' for the main thread.
    setImmediate(() => {
      throw err;
    });
  });
}
