import { signal } from '@preact/signals';
import createClient from 'openapi-fetch';
import { parseJsonOrdered } from '@intake/shared/ordered-json';
import type { paths } from './openapi';
import type { Problem, Session } from './api-types';

/** What the console knows about its session: the CSRF token lives in memory only, never the key. */
export const session = signal<Session | null | undefined>(undefined);
/** Why the owner was sent back to the sign-in screen, if they did not sign out themselves. */
export const signedOutReason = signal<string | null>(null);

/** A problem document from the API, as a message a person can read. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly errors: { field: string; message: string }[] = [],
  ) {
    super(detail ? `${title}: ${detail}` : title);
  }
}

/** The error body of a failed call (a problem document, or text when the answer was not JSON) as an ApiError. */
function problemOf(status: number, body: unknown): ApiError {
  if (body === null || typeof body !== 'object')
    return new ApiError(status, `HTTP ${status}`, String(body ?? '').slice(0, 200));
  const p = body as Partial<Problem>;
  return new ApiError(status, p.title ?? `HTTP ${status}`, p.detail ?? '', p.errors ?? []);
}

/**
 * Reads a JSON answer keeping the order of every object's names, so a submission's fields show in
 * posted order even when some are numeric (which `JSON.parse` would move first). openapi-fetch
 * reads an answer with a Content-Length (as the API sends them) through `json()`.
 */
async function fetchOrdered(input: Request): Promise<Response> {
  const response = await fetch(input);
  response.json = async () => parseJsonOrdered(await response.text());
  return response;
}

/** The management API, typed by its OpenAPI document; every call goes with the session cookie. */
export const api = createClient<paths>({
  credentials: 'same-origin',
  headers: { accept: 'application/json' },
  fetch: fetchOrdered,
});

api.use({
  onRequest({ request }) {
    // State-changing calls carry the session's CSRF token.
    if (request.method !== 'GET' && session.value) request.headers.set('x-csrf-token', session.value.csrf_token);
    return request;
  },
  onResponse({ response }) {
    // A 401 while signed in: the session has ended, so back to the sign-in screen, saying why.
    if (response.status === 401 && session.value) {
      session.value = null;
      signedOutReason.value = 'Your session has ended. Sign in again to continue.';
    }
    return response;
  },
  onError() {
    return new ApiError(0, 'Network error', 'The server could not be reached; check your connection and try again');
  },
});

/** The data of a successful call; a failed call throws its problem document as an ApiError. */
export async function ok<Data>(call: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  const { data, error, response } = await call;
  if (!response.ok) throw problemOf(response.status, error);
  return data as Data;
}

/**
 * The status and data of a successful call, for an operation whose 202 asks for a next step (a second factor); a
 * failed call throws its problem document as `ok` does.
 */
export async function answerOf<Data>(
  call: Promise<{ data?: Data; error?: unknown; response: Response }>,
): Promise<{ status: number; data: Data }> {
  const { data, error, response } = await call;
  if (!response.ok) throw problemOf(response.status, error);
  return { status: response.status, data: data as Data };
}

export async function loadSession(): Promise<void> {
  try {
    const { data, response } = await api.GET('/v1/sessions/current');
    session.value = response.ok && data ? data : null;
  } catch {
    session.value = null;
  }
}

export async function signIn(key: string): Promise<void> {
  const created = await ok(api.POST('/v1/sessions', { body: { key } }));
  signedOutReason.value = null;
  session.value = created;
}

export async function signOut(): Promise<void> {
  try {
    await ok(api.DELETE('/v1/sessions/current'));
  } finally {
    session.value = null;
    signedOutReason.value = 'You have signed out.';
  }
}
