import type { ObservableGauge, ObservableResult } from '@opentelemetry/api';
import type { Db } from '../base/db';
import { instruments } from '../telemetry/signals';
import type { Worker } from './platform';

/**
 * Observes `gauge` at each metric collection with what `read` answers (one query); an error (Postgres down) skips
 * that collection. The worker stops observing. Figures read this way are the database's, the same on every pod that
 * observes them: rules take their `max`.
 */
export function observeGauge(gauge: ObservableGauge, read: () => Promise<number>): Worker {
  const callback = async (result: ObservableResult): Promise<void> => {
    try {
      result.observe(await read());
    } catch {
      // Postgres is down or busy: /readyz and the other alerts say so; skip this collection.
    }
  };
  gauge.addCallback(callback);
  return {
    async stop() {
      gauge.removeCallback(callback);
    },
  };
}

/**
 * How many enabled webhooks have failed every attempt since `failingFor` ms or longer before `now` (the partial
 * index `webhooks_failing_idx`): bounded whatever the number of webhooks, unlike a series per webhook.
 */
export async function countFailingWebhooks(db: Db, props: { now: Date; failingForMs: number }): Promise<number> {
  const row = (await db('webhooks')
    .where('enabled', true)
    .whereNotNull('failing_since')
    .andWhere('failing_since', '<=', new Date(props.now.getTime() - props.failingForMs))
    .count<{ count: string }[]>('* as count')
    .first()) as { count: string | number } | undefined;
  return Number(row?.count ?? 0);
}

/** `intake.webhooks.failing`: the webhooks failing for WEBHOOK_FAILURE_ALERT_AFTER or longer (delivery observes it). */
export function observeFailingWebhooks(props: {
  db: Db;
  clock: { now(): Date };
  config: { WEBHOOK_FAILURE_ALERT_AFTER: number };
}): Worker {
  return observeGauge(instruments().webhooksFailing, () =>
    countFailingWebhooks(props.db, { now: props.clock.now(), failingForMs: props.config.WEBHOOK_FAILURE_ALERT_AFTER }),
  );
}
