import type { Context, Next } from 'koa';
import { recordSubmission, toProblem, type SubmissionOutcome } from '@intake/shared';
import type { IngestOutcome } from '../ingest';

/** Where the submit handler leaves how the post ended, for the metrics middleware. */
const OUTCOME = 'submissionOutcome';

/**
 * A replayed Idempotency-Key counts as what the first post was (received or spam): the client gets
 * that answer again, and the dashboard's "refused or spam" share stays about refusals.
 */
export function noteSubmissionOutcome(ctx: Context, outcome: IngestOutcome): void {
  const spam = outcome.kind === 'spam' || (outcome.kind === 'replay' && outcome.spam);
  ctx.state[OUTCOME] = (spam ? 'spam' : 'received') satisfies SubmissionOutcome;
}

/**
 * Records `intake.submissions` and `intake.ingest.duration` for every form post
 * (`POST /v1/f/:slug`): the outcome the handler noted, or the slug of the problem the post was
 * refused with (an unexpected error counts as `internal-error`). Runs inside the problem
 * middleware, so it sees the error before it is rendered; other requests pass straight through.
 */
export async function submissionMetrics(ctx: Context, next: Next): Promise<void> {
  if (ctx.method !== 'POST' || !ctx.path.startsWith('/v1/f/')) return next();
  const started = performance.now();
  let outcome: SubmissionOutcome | undefined;
  try {
    await next();
    outcome = ctx.state[OUTCOME] as SubmissionOutcome | undefined;
  } catch (err) {
    outcome = toProblem(err)?.slug ?? 'internal-error';
    throw err;
  } finally {
    // No outcome: no route answered (a path with no form slug), which is not a form post.
    if (outcome) recordSubmission({ outcome, seconds: (performance.now() - started) / 1000 });
  }
}
