import { type Db } from '@intake/shared/base';
import { buildSubmissionCreatedEvent, firstIdAt } from '@intake/shared/contracts';
import { type Nats } from '@intake/shared/messaging';
import {
  findOldestOutboxTime,
  walkSubmissionsWithoutDeliveries,
} from '../repositories/submission-reconciler.repository';
import { fanOutSubmissions, type FanOutDeps } from './fan-out';

/** Submissions walked per transaction, and transactions per pass at most. */
const WALK_STEP = 5_000;
const WALK_STEPS = 20;

/** What one pass of the submission reconciler did. */
export interface SubmissionReconcileStep {
  /** Submissions walked past. */
  walked: number;
  /** Of those, the ones fanned out again (their deliveries were missing). */
  submissions: number;
  /** Deliveries made and asked for by that fan-out. */
  deliveries: number;
}

/**
 * Where the submission reconciler may walk up to: `afterMs` before `now`, and not past what is still on its way to
 * fan-out: the oldest post in the outbox (not yet published), nor the oldest event the fan-out consumer has not
 * acknowledged (published, not yet fanned out). A submission whose event is only late is left to the fan-out; one
 * whose event was lost (an events stream purged, restored, or bounded and full: `discard: old` drops the oldest,
 * read or not) sorts before both and is reconciled.
 */
async function walkUpTo(props: { db: Db; nats: Nats; fanOutConsumer: string; now: Date; afterMs: number }) {
  const { db, nats } = props;
  let time = props.now.getTime() - props.afterMs;
  const outbox = await findOldestOutboxTime(db);
  if (outbox) time = Math.min(time, outbox.getTime());
  const stream = nats.names.eventsStream;
  const info = await nats.jsm.consumers.info(stream, props.fanOutConsumer).catch(() => undefined);
  if (info && info.num_pending + info.num_ack_pending > 0) {
    const seq = info.ack_floor.stream_seq + 1;
    const filter = info.config.filter_subject;
    const query = (filter ? { seq, next_by_subj: filter } : { seq }) as unknown as { seq: number };
    const oldest = await nats.jsm.streams.getMessage(stream, query).catch(() => undefined);
    if (oldest) time = Math.min(time, oldest.time.getTime());
  }
  return time;
}

/**
 * The submission reconciler: a stored, received submission whose form has an enabled webhook (made no later than the
 * submission) without a delivery of it, `afterMs` after it was received and once nothing of it is still on its way
 * to fan-out (walkUpTo), is fanned out again from Postgres to those webhooks (and its owner's mail and autoresponse,
 * which their `notifications` rows send once). Its event was lost before fan-out read it. The deliveries' unique key
 * (webhook, submission) makes a second fan-out of the same submission, by this or by the consumer, a no-op, and the
 * send claim decides by the delivery's state, so a webhook gets the submission once. Walks each submission once, in
 * id order from its cursor (with no cursor, from `now - afterMs`), at most WALK_STEPS × WALK_STEP per pass, one
 * process at a time.
 */
export async function reconcileSubmissions(
  props: FanOutDeps & { fanOutConsumer: string; now: Date; afterMs: number },
): Promise<SubmissionReconcileStep> {
  const { now } = props;
  const before = firstIdAt('submission', await walkUpTo(props));
  const start = firstIdAt('submission', now.getTime() - props.afterMs);
  const total: SubmissionReconcileStep = { walked: 0, submissions: 0, deliveries: 0 };
  for (let i = 0; i < WALK_STEPS; i++) {
    const step = await walkSubmissionsWithoutDeliveries(
      props.db,
      { start, before, limit: WALK_STEP },
      async (missing) => {
        const hooks = new Map(missing.map((m) => [m.submission.id, m.webhookIds]));
        const events = missing.map(({ submission, files, formName }) => ({
          event: {
            event_id: `${submission.id}.reconciled`,
            ...buildSubmissionCreatedEvent({ submission, files, formName }).payload,
          },
        }));
        total.deliveries += await fanOutSubmissions({
          ...props,
          events,
          now,
          webhooksOf: (id) => hooks.get(id) ?? [],
        });
      },
    );
    if (!step) break;
    total.walked += step.walked;
    total.submissions += step.missing.length;
    if (step.walked < WALK_STEP) break;
  }
  return total;
}
