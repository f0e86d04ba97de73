/**
 * The all-in-one's background thread (`startBackgroundThread`, from `all-in-one.ts`): the outbox
 * relay and every consumer and sweeper of management, delivery and usage, on the second core,
 * while the main thread answers HTTP. Ingest's own workers stay with its routes on the main thread.
 */
import '@intake/shared/register';
import { runBackgroundThread, startPlatformRelay, type Worker } from '@intake/shared';
import { deliveryService } from '@intake/delivery';
import { usageService } from '@intake/usage';
import { managementService } from '@intake/management';

runBackgroundThread(async (platform) => {
  const workers: Worker[] = [];
  for (const m of [managementService, deliveryService, usageService]) workers.push(...(await m.startWorkers(platform)));
  workers.push(startPlatformRelay(platform));
  return workers;
});
