import type { Logger } from '../base/logger';
import type { Subscription } from 'nats';
import type { Nats } from './nats';

/**
 * Form changes, announced by management after each commit over NATS core pub/sub (not JetStream:
 * a notice is only useful now, to the processes running now). Every ingest process subscribes and
 * drops its cached copy of the form at once; its cache's time limit (FORM_CACHE_MS) stays as the
 * safety net for a notice lost while NATS was unreachable.
 */
export const FORM_CHANGED_SUBJECT = 'forms.changed';

export interface FormChange {
  form_id: string;
  /** The form's slug after the change (absent when it was deleted). */
  slug?: string;
  /** Set when the owner marked one of the form's submissions: the account's spam model learns from it. */
  account_id?: string;
}

/** Publishes one notice; never throws (a lost notice is covered by the cache's time limit). */
export function announceFormChange(props: { nats: Nats; logger: Logger; change: FormChange }): void {
  try {
    props.nats.nc.publish(props.nats.names.subject(FORM_CHANGED_SUBJECT), JSON.stringify(props.change));
  } catch (err) {
    props.logger.warn({ err, form_id: props.change.form_id }, 'form change not announced; ingest caches expire it');
  }
}

/**
 * Calls `onChange` for every notice until `stop()`, on the connection now and on each that replaces one closed for
 * good (subscribing from NATS's first connection on). Malformed notices are ignored.
 */
export function subscribeFormChanges(nats: Nats, onChange: (change: FormChange) => void): { stop(): void } {
  let subscription: Subscription | undefined;
  const stopFollowing = nats.eachConnection((nc) => {
    subscription = nc.subscribe(nats.names.subject(FORM_CHANGED_SUBJECT), {
      callback: (err, msg) => {
        if (err) return;
        try {
          const change = msg.json<FormChange>();
          if (change && typeof change.form_id === 'string') onChange(change);
        } catch {
          // not a notice of ours
        }
      },
    });
  });
  return {
    stop() {
      stopFollowing();
      subscription?.unsubscribe();
    },
  };
}
