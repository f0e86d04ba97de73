import type { components, operations } from './openapi';

type Responses<Op extends keyof operations> = operations[Op]['responses'];

/** The JSON body of an operation's response with status `S` (200 unless named), as the OpenAPI document types it. */
export type ResponseBody<Op extends keyof operations, S extends number = 200> = S extends keyof Responses<Op>
  ? Responses<Op>[S] extends { content: { 'application/json': infer Body } }
    ? Body
    : never
  : never;

/** The JSON body an operation accepts. */
export type RequestBody<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

// Names for the shapes the console shows, each taken from the operation that returns it.
export type Session = ResponseBody<'getCurrentSession'>;
export type Form = ResponseBody<'getForm'>;
export type FormSettings = RequestBody<'createForm'>;
export type SubmissionDetail = ResponseBody<'getSubmission'>;
export type Submission = ResponseBody<'listSubmissions'>['data'][number];
export type Webhook = ResponseBody<'listWebhooks'>['data'][number];
export type WebhookTest = ResponseBody<'testWebhook'>;
export type Delivery = ResponseBody<'listWebhookDeliveries'>['data'][number];
export type ApiKey = ResponseBody<'listApiKeys'>['data'][number];
export type NewApiKey = ResponseBody<'createApiKey', 201>;
export type Usage = ResponseBody<'getUsage'>;
export type Problem = components['schemas']['Problem'];
export type Project = ResponseBody<'listProjects'>['data'][number];
export type AccountDashboard = ResponseBody<'getAccountDashboard'>;
export type ProjectDashboard = ResponseBody<'getProjectDashboard'>;
