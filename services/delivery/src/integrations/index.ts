import type { IntegrationFormat } from '@intake/shared/webhooks';
import type { AttemptResult } from '../send/attempt';
import { airtable } from './airtable';
import { runIntegration, type Integration, type IntegrationAttempt } from './attempt';
import { googleSheets } from './google-sheets';
import { notion } from './notion';

export type { IntegrationApis } from './attempt';

const INTEGRATIONS: Record<IntegrationFormat, Integration> = {
  google_sheets: googleSheets,
  airtable,
  notion,
};

/**
 * One attempt of an integration webhook (a row, record or page; a connection check for a test ping), reported as
 * every attempt is: the delivery log, retries (after the API's `Retry-After` when it sends one), health and replay
 * are those of every webhook. Never throws.
 */
export async function sendToIntegration(
  format: IntegrationFormat,
  attempt: Omit<IntegrationAttempt, 'signal'>,
  now: Date,
): Promise<AttemptResult> {
  const signal = AbortSignal.timeout(attempt.timeoutMs);
  return runIntegration(INTEGRATIONS[format], { ...attempt, signal }, now);
}
