import type { IncomingMessage } from 'node:http';
import { mayHaveCommitted, newId, Problem, problem, toTimestamp, type Platform } from '@intake/shared';
import { findReplay } from '../repositories/ingest.repository';
import { verifyChallenge } from './bot-challenge';
import { passGate, type GateRequest } from './gate';
import { LIMITS } from './limits';
import { parseMultipart, type StoredUpload } from './parse-multipart';
import { parseJson, parseUrlencoded, readBounded } from './parse-simple';
import { buildPayload, checkFieldNames, spamReason, type Fields } from './payload';
import type { IngestRateLimiter } from './rate-limit';
import { storeSubmission } from './store';
import { unsettledFilesOf } from './unsettled-files';

export type BodyKind = 'urlencoded' | 'multipart' | 'json';

export interface IngestRequest extends GateRequest {
  req: IncomingMessage;
  kind: BodyKind | undefined;
  contentLength: number | undefined;
  userAgent: string | undefined;
  referrer: string | undefined;
}

export type IngestOutcome = { redirectUrl: string | null } & (
  | { kind: 'created'; id: string; receivedAt: string; files: number }
  | { kind: 'spam' }
  | { kind: 'replay'; id: string; spam: boolean }
);

/** Accepts one post: the checks before the body, the body (files streamed to storage), spam and challenge, then one transaction. */
export async function ingestSubmission(props: {
  platform: Platform;
  limiter: IngestRateLimiter;
  request: IngestRequest;
}): Promise<IngestOutcome> {
  const { platform, request } = props;
  const gate = await passGate(props);
  const { form, now } = gate;
  const redirectUrl = form.redirect_url;
  if (gate.replay)
    return { kind: 'replay', id: gate.replay.submission_id, spam: gate.replay.status === 'spam', redirectUrl };

  const submissionId = newId('submission', now.getTime());
  const { fields, files } = await readBody({
    platform,
    request,
    maxFileBytes: form.max_file_bytes,
    keyPrefix: `${form.account_id}/${form.id}/${submissionId}`,
    honeypotField: form.honeypot_field,
  });
  let keepFiles = false;
  try {
    checkFieldNames(fields);
    const { payload, honeypot, challengeToken } = buildPayload(fields, form.honeypot_field);
    let spam = spamReason(honeypot);
    if (!spam && form.bot_challenge_provider && form.bot_challenge_secret) {
      const verdict = await verifyChallenge({
        provider: form.bot_challenge_provider,
        secret: platform.secrets.open(form.bot_challenge_secret),
        token: challengeToken,
        remoteIp: request.ip,
        verifyUrl: platform.config.BOT_CHALLENGE_VERIFY_URL,
      });
      if (verdict === 'failed')
        throw problem('challenge-failed', 'The bot challenge token is missing or was not accepted by the provider');
      // The provider could not answer: keep the submission, but out of the way (see README, "Ingest").
      if (verdict === 'unavailable') spam = 'challenge-unavailable';
    }
    const stored = spam ? [] : files;
    if (spam && files.length) await platform.blobs.delete(files.map((f) => f.storage_key));

    const outcome = await storeSubmission({
      platform,
      accepted: {
        form,
        period: gate.period,
        now,
        submissionId,
        spam,
        payload,
        files: stored,
        idempotencyKey: request.idempotencyKey,
        ip: request.ip,
        userAgent: request.userAgent,
        referrer: request.referrer,
      },
    }).catch((err: unknown) => {
      // The submission may have been stored (the connection broke after the commit): a stored
      // submission must never point at deleted files, so they stay until Postgres can tell.
      if (!(err instanceof Problem) && mayHaveCommitted(err) && stored.length) {
        keepFiles = true;
        unsettledFilesOf(platform).add(
          submissionId,
          stored.map((f) => f.storage_key),
          (err as { backendPid?: number }).backendPid,
        );
      }
      throw err;
    });
    if (outcome === 'lost-idempotency-race') {
      await discard(platform, files);
      const replay = await findReplay(platform.db, form.id, request.idempotencyKey as string, now);
      if (!replay) throw problem('conflict', 'Another request with this Idempotency-Key is being processed; retry it');
      return { kind: 'replay', id: replay.submission_id, spam: replay.status === 'spam', redirectUrl };
    }
    if (spam) return { kind: 'spam', redirectUrl };
    return { kind: 'created', id: submissionId, receivedAt: toTimestamp(now), files: stored.length, redirectUrl };
  } catch (err) {
    if (!keepFiles) await discard(platform, files);
    throw err;
  }
}

async function discard(platform: Platform, files: StoredUpload[]): Promise<void> {
  if (files.length)
    await platform.blobs
      .delete(files.map((f) => f.storage_key))
      .catch((err) => platform.logger.warn({ err }, 'could not delete the files of a refused submission'));
}

async function readBody(props: {
  platform: Platform;
  request: IngestRequest;
  maxFileBytes: number;
  keyPrefix: string;
  honeypotField: string;
}): Promise<{ fields: Fields; files: StoredUpload[] }> {
  const { request, maxFileBytes } = props;
  const length = request.contentLength;
  switch (request.kind) {
    case 'multipart': {
      if (length !== undefined && maxFileBytes <= 0 && length > LIMITS.bodyBytes)
        throw problem(
          'uploads-not-allowed',
          'The plan of this form’s account does not include file uploads, and the body is too large for fields alone',
        );
      if (length !== undefined && length > LIMITS.files * maxFileBytes + LIMITS.bodyBytes)
        throw problem(
          'file-too-large',
          `Each file may be at most ${maxFileBytes} bytes on this plan (and at most ${LIMITS.files} files); this body is larger than that allows`,
        );
      const isSpam = (fields: Fields) =>
        fields.some(([name, value]) => name === props.honeypotField && value.trim() !== '');
      return parseMultipart({
        req: request.req,
        blobs: props.platform.blobs,
        keyPrefix: props.keyPrefix,
        maxFileBytes,
        skipFiles: isSpam,
      });
    }
    case 'json':
      return { fields: parseJson(await readBounded(request.req, length)), files: [] };
    case 'urlencoded':
      return { fields: parseUrlencoded(await readBounded(request.req, length)), files: [] };
    default:
      if (length === 0 || (length === undefined && !request.req.headers['transfer-encoding']))
        throw problem('bad-body', 'The request has no body: post the form’s fields');
      throw problem(
        'unsupported-media-type',
        'Send application/x-www-form-urlencoded, multipart/form-data or application/json',
      );
  }
}
