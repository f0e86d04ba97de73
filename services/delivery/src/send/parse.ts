import { Value } from '@sinclair/typebox/value';
import { DeliveryRequested } from '@intake/shared/contracts';
import { type Delivered, type Outcome, type Outcomes } from '@intake/shared/messaging';
import { processDeliveryRequests, type DeliverDeps } from './deliver';

/**
 * The send path's first phase, for the send consumer: the messages that are a `delivery.requested` go on together
 * (one claim for all, then each settles when its attempt is recorded); any other is dropped.
 */
export function sendRequested(deps: DeliverDeps): (messages: Delivered[]) => Promise<Outcomes> {
  return async (messages) => {
    const valid = messages.flatMap(({ data, within }, i) =>
      Value.Check(DeliveryRequested, data) ? [{ i, request: data, within }] : [],
    );
    const sent = await processDeliveryRequests(deps, valid);
    const outcomes: (Outcome | Promise<Outcome>)[] = messages.map(() => ({ drop: 'not a DeliveryRequested' }));
    valid.forEach(({ i }, k) => (outcomes[i] = sent[k]!));
    return outcomes;
  };
}
