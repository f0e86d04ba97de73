/**
 * The all-in-one's background thread (`startBackgroundThread`, from `all-in-one.ts`): the path of
 * a webhook after the 201, the outbox relay and delivery's consumers (fan-out, send, mail) and
 * sweeper, on the second core while the main thread answers HTTP. Ingest's own workers stay with
 * its routes on the main thread; usage counting and management's sweepers run on the bookkeeping
 * thread (`all-in-one-bookkeeping.ts`).
 */
import '@intake/shared/register';
import { runBackgroundThread, startPlatformRelay } from '@intake/shared/runtime';
import { deliveryService } from '@intake/delivery';

runBackgroundThread(async (platform) => [
  ...(await deliveryService.startWorkers(platform)),
  startPlatformRelay(platform),
]);
