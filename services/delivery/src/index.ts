import { observeFailingWebhooks, type ServiceModule } from '@intake/shared/runtime';
import { startDeliveryWorkers } from './consumers/consumers';

/** The delivery service: webhook fan-out and sending (with the retry ladder) and notification e-mail, all JetStream consumers. */
export const deliveryService: ServiceModule = {
  name: 'delivery',
  publishesEvents: false,
  cors: false,
  routes: () => [],
  compose: () => undefined,
  // Its consumers, and `intake.webhooks.failing` (the webhooks failing for WEBHOOK_FAILURE_ALERT_AFTER) at each scrape.
  startWorkers: async (platform) => [...(await startDeliveryWorkers(platform)), observeFailingWebhooks(platform)],
};

export {
  CONSUMERS,
  sendAckWaitMs,
  startDeliveryWorkers,
  startTestPings,
  type DeliveryConsumer,
} from './consumers/consumers';
export {
  processDeliveryRequests,
  deliveryStore,
  attemptLeaseMs,
  MAX_ATTEMPTS,
  retryDelayMs,
  RETRY_JITTER,
} from './send/deliver';
export { SendSlots } from './send/slots';
export { submissionData } from './domain/fan-out';
export { notifySubmissions, requestNotification, MAX_MAIL_ATTEMPTS, MAIL_LEASE_MS } from './domain/notify';
export { submissionMail, replyToOf, REPLY_TO_FIELDS } from './domain/notification-mail';
export { sendDigests, digestMail, DIGEST_LISTED } from './domain/digest';
export { sweepWebhookHealth, pumpReplays, REPLAYS_PER_PUMP } from './domain/webhook-health';
export { HealthTally, HEALTH_TALLY_MS } from './domain/health-tally';
export { reconcileDeliveries } from './domain/parking';
export { autoresponseRecipient, AUTORESPONSE_FIELDS } from './domain/autoresponse';
export { fillPlaceholders } from './domain/placeholders';
