export interface Form {
  id: string;
  name: string;
  slug: string;
  status: 'live' | 'paused' | 'draft';
  honeypot_field: string;
  bot_challenge: { provider: 'turnstile' | 'hcaptcha' | 'recaptcha' } | null;
  notify_emails: string[];
  redirect_url: string | null;
  allowed_origins: string[];
  ingest_url: string;
  created_at: string;
  updated_at: string;
}

export interface Submission {
  id: string;
  form_id: string;
  status: 'received' | 'spam';
  received_at: string;
  payload: Record<string, string>;
  files: number;
  spam_reason: string | null;
}

export interface Attachment {
  id: string;
  field: string;
  filename: string;
  content_type: string;
  size: number;
  url: string;
  expires_at: string;
}

export interface Webhook {
  id: string;
  form_id: string;
  url: string;
  enabled: boolean;
  created_at: string;
  secret?: string;
}

export interface Attempt {
  attempt: number;
  trigger: 'schedule' | 'replay' | 'test';
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

export interface Delivery {
  id: string;
  webhook_id: string;
  type: string;
  submission_id: string | null;
  status: 'pending' | 'retrying' | 'succeeded' | 'failed';
  attempt_count: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  attempts: Attempt[];
}

export interface ApiKey {
  id: string;
  type: 'submission' | 'management';
  name: string | null;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  key?: string;
}

/** The usage service's report, shared with it (a type-only import: nothing of it reaches the bundle). */
export type { UsageReport as Usage } from '../../../usage/src/domain/usage-report.types';

export interface ListOf<T> {
  data: T[];
}
export interface PageOf<T> {
  data: T[];
  next_cursor: string | null;
}
