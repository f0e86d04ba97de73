import type { IncomingMessage } from 'node:http';
import { mayHaveCommitted } from '@intake/shared/base';
import { newId, Problem, problem, toTimestamp, type Directions, type VisitorPages } from '@intake/shared/contracts';
import { type StoredUpload } from '@intake/shared/submissions';
import type { IngestDeps } from './compose';
import type { IngestForm } from './read/form.repository';
import { findReplay } from './store/submission.repository';
import { readBody, type BodyKind } from './read/body';
import { buildPayload, checkFields, type Fields } from './read/fields';
import type { ControlFields } from './read/control-fields';
import { passGate, type GateRequest } from './judge/gate';
import { LIMITS } from './read/limits';
import { CHALLENGE_UNAVAILABLE, honeypotFilled, spamVerdict } from './judge/spam';
import { filterPost, type FilterVerdict } from './judge/spam-filter';
import type { StoreOutcome } from './store/group-writer';

/** Why a post is spam (`honeypot`, `challenge-unavailable`), or undefined for a genuine one. */
type SpamReason = string | undefined;

export interface IngestRequest extends GateRequest {
  req: IncomingMessage;
  kind: BodyKind | undefined;
  contentLength: number | undefined;
  userAgent: string | undefined;
  referrer: string | undefined;
}

export type IngestOutcome = { redirectUrl: string | null; pages?: VisitorPages | null } & (
  | { kind: 'created'; id: string; receivedAt: string; files: number }
  | { kind: 'spam' }
  | { kind: 'replay'; id: string; spam: boolean }
);

/**
 * Accepts one post, in the four phases that are ingest's folders: **read** the form and the body
 * (`read/`: files streamed to storage as they come), **judge** it (`judge/`: the gate's checks run
 * before the body is read, the fields, honeypot, bot challenge and spam filter after), **store** it
 * in one transaction with its event (`store/`: the group writer), and **answer** (`answer/`, from the
 * route, with the outcome returned here).
 */
export async function ingestSubmission(deps: IngestDeps, request: IngestRequest): Promise<IngestOutcome> {
  const { platform } = deps;
  const gate = await passGate({ platform, limiter: deps.limiter, formCache: deps.formCache, request });
  const { form, now } = gate;
  const redirectUrl = form.redirect_url;
  if (gate.replay)
    return {
      kind: 'replay',
      id: gate.replay.submission_id,
      spam: gate.replay.status === 'spam',
      redirectUrl,
      pages: form.pages,
    };

  const submissionId = newId('submission', now.getTime());
  const { fields, files } = await readBody({
    req: request.req,
    kind: request.kind,
    contentLength: request.contentLength,
    blobs: platform.blobs,
    maxFileBytes: form.max_file_bytes,
    keyPrefix: `${form.account_id}/${form.id}/${submissionId}`,
    honeypotField: form.honeypot_field,
  });
  const unsettled = { files: false };
  try {
    const { payload, spam, filter, control } = await judgePost(deps, { form, fields, files, ip: request.ip, now });
    const stored = await filesToKeep(deps, spam, files);
    const { directions } = control;
    const post = { submissionId, form, receivedAt: now, spam, filter, payload, directions, files: stored, request };
    // A browser goes to the post's own `_next` (one of the form's origins) after a success, else to the form's.
    const next = control.next ?? redirectUrl;
    if ((await storePost(deps, post, unsettled)) === 'lost-idempotency-race') {
      await discard(deps, files);
      const replay = await findReplay(platform.db, { formId: form.id, key: request.idempotencyKey as string, now });
      if (!replay) throw problem('conflict', 'Another request with this Idempotency-Key is being processed; retry it');
      return {
        kind: 'replay',
        id: replay.submission_id,
        spam: replay.status === 'spam',
        redirectUrl: next,
        pages: form.pages,
      };
    }
    // Spam is answered as a success is, `_next` included: nothing tells a bot it was caught.
    if (spam) return { kind: 'spam', redirectUrl: next, pages: form.pages };
    return {
      kind: 'created',
      id: submissionId,
      receivedAt: toTimestamp(now),
      files: stored.length,
      redirectUrl: next,
      pages: form.pages,
    };
  } catch (err) {
    if (!unsettled.files) await discard(deps, files);
    throw err;
  }
}

/**
 * What the post says and whether it is spam: its fields checked, its payload built (control
 * fields out), an empty post refused, then the honeypot and the bot challenge, then (for a post
 * they let through) the form's spam filter.
 */
async function judgePost(
  deps: IngestDeps,
  post: { form: IngestForm; fields: Fields; files: StoredUpload[]; ip: string; now: Date },
): Promise<{ payload: Record<string, string>; spam: SpamReason; filter: FilterVerdict; control: ControlFields }> {
  const { platform } = deps;
  const { form, fields } = post;
  checkFields(fields);
  const { payload, challengeToken, control } = buildPayload(fields, form);
  // An empty post (no value once the control fields are out, no file) is refused, unless it is
  // spam by its honeypot (answered as spam is); see docs/decisions/ingest.md#bad-input.
  if (isEmpty(payload, post.files) && !honeypotFilled(fields, form.honeypot_field))
    throw problem('validation-failed', 'The submission is empty: no field has a value and no file was sent', {
      errors: [{ field: 'body', message: 'has no field with a value (control fields aside) and no file' }],
    });
  const spam = await spamVerdict({
    fields,
    honeypotField: form.honeypot_field,
    challenge:
      form.bot_challenge_provider && form.bot_challenge_secret
        ? {
            provider: form.bot_challenge_provider,
            secret: platform.secrets.open(form.bot_challenge_secret),
            token: challengeToken,
            remoteIp: post.ip,
            verifyUrl: platform.config.BOT_CHALLENGE_VERIFY_URL,
          }
        : undefined,
  });
  if (spam) return { payload, spam, filter: { spam, score: null, reasons: [spam] }, control };
  const filter = await filterPost({ db: platform.db, spamModels: deps.spamModels }, { form, payload, now: post.now });
  return { payload, spam: filter.spam, filter, control };
}

/**
 * Spam stores no files (they are deleted now), except a post kept because the bot-challenge
 * provider could not answer: its owner may rescue it, and must then get all of it (docs/decisions/ingest.md#honeypot-and-bot-challenge).
 */
async function filesToKeep({ platform }: IngestDeps, spam: SpamReason, files: StoredUpload[]): Promise<StoredUpload[]> {
  const stored = spam && spam !== CHALLENGE_UNAVAILABLE ? [] : files;
  if (stored !== files && files.length) await platform.blobs.delete(files.map((f) => f.storage_key));
  return stored;
}

/**
 * The post's one transaction, through the group writer. When it fails in a way that may have
 * committed (the connection broke after the commit), a stored submission must never point at
 * deleted files: they are left to `unsettled`, which keeps them until Postgres can tell, and
 * `handedOver.files` says so.
 */
function storePost(
  deps: IngestDeps,
  post: {
    submissionId: string;
    form: IngestForm;
    receivedAt: Date;
    spam: SpamReason;
    filter: FilterVerdict;
    payload: Record<string, string>;
    directions: Directions;
    files: StoredUpload[];
    request: IngestRequest;
  },
  handedOver: { files: boolean },
): Promise<StoreOutcome> {
  const { request, receivedAt, files } = post;
  return deps.writer
    .store({
      submissionId: post.submissionId,
      form: post.form,
      receivedAt,
      spam: post.spam,
      filter: post.filter,
      payload: post.payload,
      directions: post.directions,
      files,
      idempotency:
        request.idempotencyKey === undefined
          ? undefined
          : { key: request.idempotencyKey, expiresAt: new Date(receivedAt.getTime() + LIMITS.idempotencyMs) },
      ip: request.ip,
      userAgent: request.userAgent,
      referrer: request.referrer,
    })
    .catch((err: unknown) => {
      if (!(err instanceof Problem) && mayHaveCommitted(err) && files.length) {
        handedOver.files = true;
        deps.unsettled.add(
          post.submissionId,
          files.map((f) => f.storage_key),
          (err as { backendPid?: number }).backendPid,
        );
      }
      throw err;
    });
}

async function discard({ platform }: IngestDeps, files: StoredUpload[]): Promise<void> {
  if (files.length)
    await platform.blobs
      .delete(files.map((f) => f.storage_key))
      .catch((err) => platform.logger.warn({ err }, 'could not delete the files of a refused submission'));
}

/** No field with a non-blank value (the control fields are already out of `payload`) and no file. */
function isEmpty(payload: Record<string, string>, files: readonly StoredUpload[]): boolean {
  return files.length === 0 && Object.values(payload).every((value) => value.trim() === '');
}
