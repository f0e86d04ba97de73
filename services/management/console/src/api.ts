import { signal } from '@preact/signals';

/** What the console knows about its session: the CSRF token lives in memory only, never the key. */
export interface Session {
  account_id: string;
  key_id: string;
  csrf_token: string;
  expires_at: string;
  idle_expires_at: string;
}

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

async function problemOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const p = JSON.parse(text) as { title?: string; detail?: string; errors?: { field: string; message: string }[] };
    return new ApiError(res.status, p.title ?? `HTTP ${res.status}`, p.detail ?? '', p.errors ?? []);
  } catch {
    return new ApiError(res.status, `HTTP ${res.status}`, text.slice(0, 200));
  }
}

/** Calls the management API with the session cookie; state-changing calls carry the CSRF token. */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && session.value) headers['x-csrf-token'] = session.value.csrf_token;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'Network error', 'The server could not be reached; check your connection and try again');
  }
  if (res.status === 401 && session.value) {
    session.value = null;
    signedOutReason.value = 'Your session has ended. Sign in again to continue.';
  }
  if (!res.ok) throw await problemOf(res);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function loadSession(): Promise<void> {
  try {
    const res = await fetch('/v1/sessions/current', {
      credentials: 'same-origin',
      headers: { accept: 'application/json' },
    });
    session.value = res.ok ? ((await res.json()) as Session) : null;
  } catch {
    session.value = null;
  }
}

export async function signIn(key: string): Promise<void> {
  const res = await fetch('/v1/sessions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    credentials: 'same-origin',
    body: JSON.stringify({ key }),
  });
  if (!res.ok) throw await problemOf(res);
  signedOutReason.value = null;
  session.value = (await res.json()) as Session;
}

export async function signOut(): Promise<void> {
  try {
    await api('DELETE', '/v1/sessions/current');
  } finally {
    session.value = null;
    signedOutReason.value = 'You have signed out.';
  }
}

/** Query string of the defined, non-empty values. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== '');
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}` : '';
}
