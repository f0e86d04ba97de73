import { type Db, type Logger } from '@intake/shared/base';
import { startPeriodic, type Worker } from '@intake/shared/runtime';
import { deleteSweepBatch, sweepVictims } from './retention.repository';

/** How long bookkeeping rows are kept once they can no longer matter. */
export const RETENTION = {
  /** Consumers deduplicate on these; JetStream keeps events 7 days, so a redelivery is never older. */
  processedEventsMs: 8 * 24 * 60 * 60 * 1000,
} as const;

/**
 * Deletes expired idempotency keys and old processed-event marks, in batches (the outbox relay deletes what it
 * publishes). Returns rows deleted.
 */
export async function sweepRetention(props: {
  db: Db;
  now: Date;
  batch?: number;
}): Promise<{ idempotencyKeys: number; processedEvents: number }> {
  const { db, now } = props;
  const batch = props.batch ?? 5000;
  const sweep = async (table: string, victims: () => ReturnType<Db>): Promise<number> => {
    let total = 0;
    for (;;) {
      const deleted = await deleteSweepBatch(db, table, victims());
      total += deleted;
      if (deleted < batch) return total;
    }
  };
  const before = new Date(now.getTime() - RETENTION.processedEventsMs);
  return {
    idempotencyKeys: await sweep('idempotency_keys', () => sweepVictims.idempotencyKeys(db, { now, batch })),
    processedEvents: await sweep('processed_events', () => sweepVictims.processedEvents(db, { before, batch })),
  };
}

/** Runs `sweepRetention` every `intervalMs` (several replicas may run it: deletes are idempotent). */
export function startRetentionSweeper(props: {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
  intervalMs?: number;
}): Worker {
  return startPeriodic({
    intervalMs: props.intervalMs ?? 10 * 60 * 1000,
    logger: props.logger,
    failure: 'retention sweep failed; will retry',
    task: async () => {
      const n = await sweepRetention({ db: props.db, now: props.clock.now() });
      if (n.idempotencyKeys + n.processedEvents > 0) props.logger.info(n, 'retention sweep');
    },
  });
}
