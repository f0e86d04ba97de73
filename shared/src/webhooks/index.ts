export {
  createWebhookAgent,
  sendWebhook,
  signedRequest,
  timeAttempt,
  USER_AGENT,
  RESPONSE_BODY_LIMIT,
  type AttemptResult,
  type WebhookAgent,
  type ChatTarget,
  type Envelope,
  type EventType,
} from './sender';
export { chatBody, isChatFormat, shownChatUrl, WEBHOOK_FORMATS, type ChatFormat, type WebhookFormat } from './chat';
export {
  INTEGRATION_FORMATS,
  isIntegration,
  type AirtableDestination,
  type Destination,
  type IntegrationFormat,
  type NotionDestination,
  type ServiceAccountKey,
  type SheetsDestination,
} from './integrations';
export { generateWebhookSecret, retryAfterMs, serviceSignature, standardSignature } from './sender';
export {
  checkWebhookUrl,
  urlRefusal,
  isBlockedAddress,
  guardedLookup,
  BlockedTargetError,
  TARGET_REFUSAL,
} from './url-guard';
export { deliveryRequest, publishTraced, requestDelivery, type TracedMessage } from './delivery-request';
export {
  insertDelivery,
  recordDeliveryAttempts,
  RECORD_DELIVERY_ATTEMPTS,
  type AttemptRecord,
  type DeliveryRow,
  type DeliveryStatus,
  type DeliveryTrigger,
} from './deliveries.repository';
export {
  requestTestPing,
  serveTestPings,
  TestPingAnswer,
  TestPingRequest,
  TestPingUnavailable,
  TEST_PING_QUEUE,
  TEST_PING_SLOT_WAIT_MS,
  TEST_PING_SUBJECT,
} from './test-ping';
