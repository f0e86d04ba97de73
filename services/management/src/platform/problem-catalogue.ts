import { PROBLEMS, PROBLEM_SLUGS, type ProblemSlug } from '@intake/shared/contracts';

/** What each problem type means and what a client should do about it: served at `{PROBLEMS_URL}/<slug>`. */
const DESCRIPTIONS: Record<ProblemSlug, string> = {
  'bad-body':
    'The request body could not be parsed as form data or JSON. Fix the encoding or the Content-Type header and send it again.',
  'quota-exceeded':
    'The account has used its monthly submission allowance (`limit` in the problem). Nothing was ' +
    'stored. Posts are accepted again next calendar month (UTC) or after a plan change.',
  'form-not-live':
    'The form is paused or a draft, so it accepts no posts. Its owner can set its status back to `live`.',
  'invalid-key':
    'The API key sent is unknown, malformed, revoked, or (on ingest) belongs to another account. Use ' +
    'a valid key; the Authorization header must be `Bearer <key>`.',
  'challenge-failed':
    'The form requires a bot-challenge token in the `bot-challenge-response` field (or the widget’s own ' +
    '`cf-turnstile-response`, `h-captcha-response` or `g-recaptcha-response`) and it was ' +
    'missing or the provider rejected it. Complete the challenge and post again.',
  'form-not-found': 'No form has this slug. Check the form’s ingest URL.',
  'file-too-large': 'A file is larger than the plan’s per-file limit. It was rejected before anything was stored.',
  'uploads-not-allowed': 'The account’s plan does not include file uploads. Post without files or change plans.',
  'rate-limited':
    'Too many requests: the per-IP per-form ingest limit, or the API-key creation cap. Wait for the number of seconds in `Retry-After`.',
  'bad-request':
    'The request is not valid HTTP/1.1 (a malformed request line or header, a control character in a header, a bad ' +
    'chunked encoding). Fix the client; the connection is closed.',
  unauthorized:
    'The endpoint needs a management key: send `Authorization: Bearer svc_mgmt_...`; or the console session sent ' +
    'has expired or was ended (sign in again).',
  'insufficient-scope':
    'The key is valid but of the wrong type: a submission key can only post to forms, it cannot read data or change configuration.',
  'csrf-failed':
    'The request was authenticated by the console’s session cookie and changes something, but did not send the ' +
    'session’s `csrf_token` (from `POST /v1/sessions` or `GET /v1/sessions/current`) in the `x-csrf-token` header.',
  forbidden:
    'The key or console member is valid, but its role does not allow this request (`required_role` in the problem ' +
    'names the least role that does). Roles: viewer reads and exports; editor also changes forms, submissions and ' +
    'webhooks; admin also manages API keys, members below owner and reads the audit log; owner also manages ' +
    'owners. Nothing was changed.',
  'origin-not-allowed':
    'The form lists the websites (`allowed_origins`) that may post to it from a browser, and the ' +
    'request came from another one (its `Origin`, or the origin of its `Referer`). Posts without ' +
    'either header are not browser posts and are not checked.',
  'not-found':
    'Nothing exists at this address for this key: the resource does not exist, was deleted, or belongs to another account.',
  'method-not-allowed':
    'The path exists but does not accept this HTTP method. The `Allow` header lists the methods that do.',
  'not-acceptable': 'None of the media types in the Accept header can be produced for this resource.',
  'request-timeout':
    'The request did not arrive in time: its head took longer than 10 seconds, or its body arrived slower than the ' +
    'minimum rate (8 KiB a second over 10-second windows). The connection is closed; send it again on a faster ' +
    'link.',
  conflict:
    'The request conflicts with the current state, for example a form slug that is already taken or revoking the last management key.',
  'link-expired': 'The signed download link has expired. Fetch the submission again to get a fresh link.',
  'body-too-large': 'The request body is larger than this endpoint accepts.',
  'unsupported-media-type':
    'The body was sent with a content type this endpoint does not accept; the management API takes `application/json`.',
  'validation-failed':
    'The body, query or path parameters parsed but do not fit the schema. `errors` lists each bad ' +
    'field (`body/<name>`, `query/<name>`, `params/<name>`) with a message.',
  'headers-too-large': 'The request line and headers together are larger than the server accepts (16 KiB).',
  'internal-error': 'Something failed on the server. It has been logged; retrying later may help.',
  'bad-gateway': 'A service Intake depends on answered with an error.',
  'service-unavailable':
    'A backing service (database, queue or storage) is temporarily unavailable. Retry after the seconds in `Retry-After`.',
};

export interface ProblemDescription {
  slug: ProblemSlug;
  type: string;
  title: string;
  status: number;
  description: string;
}

export function describeProblem(slug: ProblemSlug, problemsUrl: string): ProblemDescription {
  return {
    slug,
    type: `${problemsUrl}/${slug}`,
    title: PROBLEMS[slug].title,
    status: PROBLEMS[slug].status,
    description: DESCRIPTIONS[slug],
  };
}

export function problemCatalogue(problemsUrl: string): ProblemDescription[] {
  return PROBLEM_SLUGS.map((slug) => describeProblem(slug, problemsUrl));
}

export function isProblemSlug(value: string): value is ProblemSlug {
  return Object.prototype.hasOwnProperty.call(PROBLEMS, value);
}
