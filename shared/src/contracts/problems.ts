import catalogue from './problems.json';

/**
 * The closed list of problem types (problems.json: the spec's section 7, then ours). Every error any service answers
 * is one of these, rendered as application/problem+json with `type` = `${PROBLEMS_URL}/<slug>`.
 */
export const PROBLEMS = { ...catalogue.spec, ...catalogue.ours } satisfies Record<
  string,
  { status: number; title: string }
>;

export type ProblemSlug = keyof typeof PROBLEMS;
export const PROBLEM_SLUGS = Object.keys(PROBLEMS) as ProblemSlug[];

export interface FieldError {
  /** JSON pointer-ish location, e.g. `body/url` or `query/limit`. */
  field: string;
  message: string;
}

/** An error that renders as a problem document. Throw it with `throw problem(slug, detail)`. */
export class Problem extends Error {
  readonly status: number;
  readonly title: string;
  readonly expose = true;
  constructor(
    readonly slug: ProblemSlug,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'Problem';
    this.status = PROBLEMS[slug].status;
    this.title = PROBLEMS[slug].title;
  }

  toJSON(problemsUrl: string): Record<string, unknown> {
    return {
      type: `${problemsUrl}/${this.slug}`,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...this.extra,
    };
  }
}

export function problem(
  slug: ProblemSlug,
  detail: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Problem {
  return new Problem(slug, detail, extra, headers);
}

export function isProblem(err: unknown): err is Problem {
  return err instanceof Problem;
}

/** Maps errors thrown by libraries (koa-body, formidable, http-errors, pg connection failures) to problems. */
export function toProblem(err: unknown): Problem | undefined {
  if (isProblem(err)) return err;
  if (!err || typeof err !== 'object') return undefined;
  const e = err as {
    status?: unknown;
    statusCode?: unknown;
    httpCode?: unknown;
    code?: unknown;
    type?: unknown;
    message?: unknown;
  };
  const status = Number(e.status ?? e.statusCode ?? e.httpCode);
  if (e.type === 'entity.too.large' || status === 413)
    return problem('body-too-large', 'The request body is larger than this endpoint accepts');
  if (
    e.type === 'entity.parse.failed' ||
    e.type === 'encoding.unsupported' ||
    e.type === 'charset.unsupported' ||
    e.type === 'request.size.invalid' ||
    e.type === 'request.aborted'
  ) {
    return problem('bad-body', 'The request body could not be parsed');
  }
  if (status === 415) return problem('unsupported-media-type', 'This content type is not accepted here');
  if (status === 400) return problem('bad-body', 'The request body could not be parsed');
  if (isUnavailable(err))
    return problem(
      'service-unavailable',
      'A backing service is unavailable; try again shortly',
      {},
      { 'Retry-After': '5' },
    );
  return undefined;
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
  '53300',
  '55P03',
]);

/**
 * True for errors that mean a dependency (Postgres, Redis, NATS, storage) is down or stuck (55P03: a lock not granted
 * within lock_timeout) rather than a bug.
 */
export function isUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  if (e.name === 'KnexTimeoutError') return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
    message,
  );
}
