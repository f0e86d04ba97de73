/**
 * The all-in-one's bookkeeping thread (`startBackgroundThread`, from `all-in-one.ts`): usage's
 * consumer, which counts every submission, and management's workers (retention, console
 * sessions, the purge, the search indexer). None of it is on a webhook's way, so it runs apart from the background thread's
 * relay and delivery: their event loop and heap then never wait for its transactions and
 * collections (docs/decisions/operations.md#processes-and-threads).
 */
import '@intake/shared/register';
import { runBackgroundThread, type Worker } from '@intake/shared/runtime';
import { usageService } from '@intake/usage';
import { managementService } from '@intake/management';

runBackgroundThread(async (platform) => {
  const workers: Worker[] = [];
  for (const m of [managementService, usageService]) workers.push(...(await m.startWorkers(platform)));
  return workers;
});
