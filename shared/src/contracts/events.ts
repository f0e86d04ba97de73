import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { toTimestamp } from './time';
import { AutoresponseSettings } from './forms';

/**
 * Events on JetStream. Subjects are relative to NATS_PREFIX; every event carries `event_id`
 * (also its Nats-Msg-Id) so consumers deduplicate on it.
 */
export const SUBJECTS = {
  /** A submission was accepted as genuine (at ingest, or when marked "not spam" later). */
  submissionCreated: 'submission.created',
  /** A submission was caught as spam. Only usage counts it; nothing else reacts. */
  submissionSpam: 'submission.spam',
  /** One webhook delivery is due (`{ delivery_id }`); published by the delivery fan-out and by replays. */
  deliveryRequested: 'delivery.requested',
  /**
   * One submission's notification e-mail is due (`NotificationRequested`); published by the delivery
   * fan-out for the received submissions of forms with addresses, so the mail consumer sees only those.
   */
  notificationRequested: 'delivery.notification',
} as const;

export const StoredFile = Type.Object({
  id: Type.String(),
  field: Type.String(),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
});
export type StoredFile = Static<typeof StoredFile>;

/** A stored submission is `received` (genuine) or `spam` (caught by the spam layer, or moved there by its owner). */
export const SubmissionStatus = Type.Union([Type.Literal('received'), Type.Literal('spam')]);
export type SubmissionStatus = Static<typeof SubmissionStatus>;

/**
 * What the visitor's control fields asked of the owner's notification (`_subject`, `_replyto`; taken out of the
 * payload by ingest, checked there): kept with the submission and carried by its event.
 */
export const Directions = Type.Object({
  subject: Type.Optional(Type.String({ maxLength: 200 })),
  reply_to: Type.Optional(Type.String({ maxLength: 254 })),
});
export type Directions = Static<typeof Directions>;

export const SubmissionEvent = Type.Object({
  event_id: Type.String(),
  submission_id: Type.String(),
  form_id: Type.String(),
  account_id: Type.String(),
  status: SubmissionStatus,
  received_at: Type.String({ description: 'ISO timestamp of the submission' }),
  /** Stored field values: always strings (see docs/decisions/ingest.md#bodies-and-limits for JSON values and repeated fields). Empty when `payload_omitted`. */
  payload: Type.Record(Type.String(), Type.String()),
  /** The fields were too large to travel in the message (`EVENT_PAYLOAD_MAX_BYTES`): read them from the submission (`eventWithPayload`). */
  payload_omitted: Type.Optional(Type.Literal(true)),
  files: Type.Array(StoredFile),
  file_bytes: Type.Integer(),
  /** The form's name and notification addresses at the time, so consumers need no extra query for e-mail. */
  form_name: Type.String(),
  /** The control fields' directions for the notification, when the post had any. */
  directions: Type.Optional(Directions),
});
export type SubmissionEvent = Static<typeof SubmissionEvent>;

/** What every stored submission row has (services add the columns they read). */
export interface StoredSubmission {
  id: string;
  account_id: string;
  form_id: string;
  status: SubmissionStatus;
  /** Field values as stored (see `SubmissionEvent.payload`). */
  payload: Record<string, string>;
  spam_reason: string | null;
  received_at: Date;
  /** The control fields' directions (`_subject`, `_replyto`), when the post had any. */
  directions?: Directions | null;
}

/**
 * The ONE builder of a submission's event, as ingest stores it and as management enqueues it when
 * the owner marks a spam submission as received: `submission.created` for a received submission,
 * `submission.spam` for spam. `omitPayload` sends it without the fields (`payload_omitted`).
 */
export function buildSubmissionCreatedEvent(props: {
  submission: StoredSubmission;
  /** In the order they were uploaded; `size` may come as a string (a bigint column). */
  files: readonly (Omit<StoredFile, 'size'> & { size: number | string })[];
  formName: string;
  omitPayload?: boolean;
}): { subject: string; payload: Omit<SubmissionEvent, 'event_id'> } {
  const { submission: s, files } = props;
  const stored = files.map(({ id, field, filename, content_type, size }) => ({
    id,
    field,
    filename,
    content_type,
    size: Number(size),
  }));
  return {
    subject: s.status === 'spam' ? SUBJECTS.submissionSpam : SUBJECTS.submissionCreated,
    payload: {
      submission_id: s.id,
      form_id: s.form_id,
      account_id: s.account_id,
      status: s.status,
      received_at: toTimestamp(s.received_at),
      ...(props.omitPayload ? { payload: {}, payload_omitted: true as const } : { payload: s.payload }),
      files: stored,
      file_bytes: stored.reduce((n, f) => n + f.size, 0),
      form_name: props.formName,
      ...(s.directions ? { directions: s.directions } : {}),
    },
  };
}

export const DeliveryRequested = Type.Object({
  event_id: Type.String(),
  delivery_id: Type.String(),
  trigger: Type.Union([Type.Literal('schedule'), Type.Literal('replay')]),
  /**
   * The delivery's webhook and account, when the publisher knew them: a delivery process decides from them whether an
   * attempt may start (its send slots) before it reads the delivery. Absent in requests published before they were
   * added, and in replays; the claim reads them then.
   */
  webhook_id: Type.Optional(Type.String()),
  account_id: Type.Optional(Type.String()),
});
export type DeliveryRequested = Static<typeof DeliveryRequested>;

export const NotificationRequested = Type.Object({
  /** `<the submission event's id>.mail` (also its Nats-Msg-Id): a fan-out redelivered publishes it again, once. */
  event_id: Type.String(),
  /** The submission event as the fan-out received it (its fields, or `payload_omitted`). */
  event: SubmissionEvent,
  /** The form's notification addresses when the fan-out read them (empty for an autoresponse). */
  to: Type.Array(Type.String()),
  /**
   * Present when this is the submitter's autoresponse (id `<event id>.autoresponse`): the form's
   * settings when the fan-out read them.
   */
  autoresponse: Type.Optional(AutoresponseSettings),
});
export type NotificationRequested = Static<typeof NotificationRequested>;

/**
 * A submission event carries the submission's fields while the stored post (as ingest writes it,
 * fields and all) stays within this many bytes; a larger one goes without them
 * (`payload_omitted`). So every event fits a NATS message (the default max_payload is 1 MiB)
 * whatever a post holds, and one large post never stalls the outbox relay.
 */
export const EVENT_PAYLOAD_MAX_BYTES = 256 * 1024;

const submissionEventCheck = TypeCompiler.Compile(SubmissionEvent);

/** Checks a consumed message against `SubmissionEvent`; the error names the first bad field. */
export function checkSubmissionEvent(
  data: unknown,
): { ok: true; event: SubmissionEvent } | { ok: false; error: string } {
  if (submissionEventCheck.Check(data)) return { ok: true, event: data };
  const first = submissionEventCheck.Errors(data).First();
  return { ok: false, error: first ? `${first.path || '/'} ${first.message}` : 'invalid' };
}
