import { deliveryRequest, publishTraced, type Db, type Nats } from '@intake/shared';
import { takeDueParked } from '../repositories/parking.repository';

/** How often a delivery process looks for parked deliveries that are due. */
export const PARKING_PUMP_MS = 5_000;
/** Parked deliveries asked for per pump and process. */
const PER_PUMP = 500;
/** A parked delivery asked for is asked for again this much later if its attempt has not moved it meanwhile. */
export const PARKED_RECHECK_MS = 5 * 60_000;

/**
 * Asks for the attempts of the parked deliveries that are due (migration 025, `PARK_AFTER_MS`): one
 * `delivery.requested` each, in one batch, each named after the delivery and its due time, so that two
 * processes, or a pump that runs again before its commit, send it once. Returns how many were asked for.
 */
export function requeueDueDeliveries(props: { db: Db; nats: Nats; now: Date; limit?: number }): Promise<number> {
  return takeDueParked(
    props.db,
    { now: props.now, limit: props.limit ?? PER_PUMP, recheckMs: PARKED_RECHECK_MS },
    (due) =>
      publishTraced(
        props.nats,
        due.map(({ id, dueAt }) =>
          deliveryRequest({ deliveryId: id, trigger: 'schedule', eventId: `${id}.due.${dueAt.getTime()}` }),
        ),
      ),
  );
}
