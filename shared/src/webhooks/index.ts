export {
  generateWebhookSecret,
  serviceSignature,
  signedRequest,
  standardSignature,
  USER_AGENT,
  CHAT_USER_AGENT,
  type ChatTarget,
  type Envelope,
  type EventType,
  type SignedRequestProps,
} from './signed-request';
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
export {
  checkWebhookUrl,
  urlRefusal,
  isBlockedAddress,
  guardedLookup,
  BlockedTargetError,
  TARGET_REFUSAL,
} from './url-guard';
export { deliveryRequest, publishTraced, requestDelivery, type TracedMessage } from './delivery-request';
export { type DeliveryRow, type DeliveryStatus } from './deliveries';
export {
  requestTestPing,
  TestPingAnswer,
  TestPingRequest,
  TestPingUnavailable,
  TEST_PING_SLOT_WAIT_MS,
  TEST_PING_SUBJECT,
} from './test-ping';
