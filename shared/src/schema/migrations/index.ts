import type { Knex } from 'knex';
import * as schema from './001-schema';
import * as storeSubmissions from './002-store-submissions';
import * as notificationStatus from './003-notification-status';
import * as consoleSessions from './004-console-sessions';
import * as consumerLeases from './005-consumer-leases';
import * as storeSubmissionsStatement from './006-store-submissions-statement';
import * as ownerAlerts from './008-owner-alerts';
import * as spamFilter from './009-spam-filter';
import * as submissionRead from './011-submission-read';
import * as dataLifecycle from './012-data-lifecycle';
import * as people from './013-people';
import * as twoFactor from './014-two-factor';
import * as webhookDisabledNotice from './015-webhook-disabled-notice';
import * as searchKeys from './016-search-keys';
import * as signInHardening from './017-sign-in-hardening';
import * as subjectEmails from './018-subject-emails';
import * as autoresponseMailboxes from './019-autoresponse-mailboxes';
import * as replayTurns from './020-replay-turns';
import * as purgeTally from './021-purge-tally';
import * as keyMinters from './022-key-minters';
import * as processedEventsAge from './023-processed-events-age';
import * as searchOffTheWritePath from './024-search-off-the-write-path';
import * as deliveryParking from './025-delivery-parking';
import * as deliveryReconciler from './026-delivery-reconciler';
import * as notificationReconciler from './027-notification-reconciler';
import * as submissionDirections from './028-submission-directions';
import * as mailBranding from './029-mail-branding';
import * as trash from './030-trash';
import * as savedViews from './031-saved-views';
import * as visitorPages from './032-visitor-pages';
import * as projects from './033-projects';
import * as spamModelScope from './034-spam-model-scope';
import * as dashboard from './035-dashboard';
import * as signUps from './036-sign-ups';
import * as integrations from './037-integrations';
import * as searchMergePerBatch from './038-search-merge-per-batch';
import * as emailVerification from './039-email-verification';
import * as formDefaults from './040-form-defaults';
import * as spamDefaults from './041-spam-defaults';
import * as mailPerRecipient from './042-mail-per-recipient';
import * as searchAccents from './043-search-accents';
import * as rateLimits from './044-rate-limits';

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order. Add new ones at the end with the next number. */
export const migrations: Migration[] = [
  { name: '001-schema', ...schema },
  { name: '002-store-submissions', ...storeSubmissions },
  { name: '003-notification-status', ...notificationStatus },
  { name: '004-console-sessions', ...consoleSessions },
  { name: '005-consumer-leases', ...consumerLeases },
  { name: '006-store-submissions-statement', ...storeSubmissionsStatement },
  // 007 and 010 were never released.
  { name: '008-owner-alerts', ...ownerAlerts },
  { name: '009-spam-filter', ...spamFilter },
  { name: '011-submission-read', ...submissionRead },
  { name: '012-data-lifecycle', ...dataLifecycle },
  { name: '013-people', ...people },
  { name: '014-two-factor', ...twoFactor },
  { name: '015-webhook-disabled-notice', ...webhookDisabledNotice },
  { name: '016-search-keys', ...searchKeys },
  { name: '017-sign-in-hardening', ...signInHardening },
  { name: '018-subject-emails', ...subjectEmails },
  { name: '019-autoresponse-mailboxes', ...autoresponseMailboxes },
  { name: '020-replay-turns', ...replayTurns },
  { name: '021-purge-tally', ...purgeTally },
  { name: '022-key-minters', ...keyMinters },
  { name: '023-processed-events-age', ...processedEventsAge },
  { name: '024-search-off-the-write-path', ...searchOffTheWritePath },
  { name: '025-delivery-parking', ...deliveryParking },
  { name: '026-delivery-reconciler', ...deliveryReconciler },
  { name: '027-notification-reconciler', ...notificationReconciler },
  { name: '028-submission-directions', ...submissionDirections },
  { name: '029-mail-branding', ...mailBranding },
  { name: '030-trash', ...trash },
  { name: '031-saved-views', ...savedViews },
  { name: '032-visitor-pages', ...visitorPages },
  { name: '033-projects', ...projects },
  { name: '034-spam-model-scope', ...spamModelScope },
  { name: '035-dashboard', ...dashboard },
  { name: '036-sign-ups', ...signUps },
  { name: '037-integrations', ...integrations },
  { name: '038-search-merge-per-batch', ...searchMergePerBatch },
  { name: '039-email-verification', ...emailVerification },
  { name: '040-form-defaults', ...formDefaults },
  { name: '041-spam-defaults', ...spamDefaults },
  { name: '042-mail-per-recipient', ...mailPerRecipient },
  { name: '043-search-accents', ...searchAccents },
  { name: '044-rate-limits', ...rateLimits },
];
