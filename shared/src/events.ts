import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

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
} as const;

export const StoredFile = Type.Object({
  id: Type.String(),
  field: Type.String(),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
});
export type StoredFile = Static<typeof StoredFile>;

export const SubmissionEvent = Type.Object({
  event_id: Type.String(),
  submission_id: Type.String(),
  form_id: Type.String(),
  account_id: Type.String(),
  status: Type.Union([Type.Literal('received'), Type.Literal('spam')]),
  received_at: Type.String({ description: 'ISO timestamp of the submission' }),
  /** Stored field values: always strings (see the README for JSON values and repeated fields). */
  payload: Type.Record(Type.String(), Type.String()),
  files: Type.Array(StoredFile),
  file_bytes: Type.Integer(),
  /** The form's name and notification addresses at the time, so consumers need no extra query for e-mail. */
  form_name: Type.String(),
});
export type SubmissionEvent = Static<typeof SubmissionEvent>;

export const DeliveryRequested = Type.Object({ event_id: Type.String(), delivery_id: Type.String(), trigger: Type.Union([Type.Literal('schedule'), Type.Literal('replay')]) });
export type DeliveryRequested = Static<typeof DeliveryRequested>;

const submissionEventCheck = TypeCompiler.Compile(SubmissionEvent);

/** Checks a consumed message against `SubmissionEvent`; the error names the first bad field. */
export function checkSubmissionEvent(data: unknown): { ok: true; event: SubmissionEvent } | { ok: false; error: string } {
  if (submissionEventCheck.Check(data)) return { ok: true, event: data };
  const first = submissionEventCheck.Errors(data).First();
  return { ok: false, error: first ? `${first.path || '/'} ${first.message}` : 'invalid' };
}
