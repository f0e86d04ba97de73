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

export interface Breakdown {
  received: number;
  spam: number;
  file_bytes: number;
}

export interface Usage {
  account_id: string;
  plan: { id: string; name: string };
  period: { month: string; start: string; end: string };
  limit: number;
  used: number;
  remaining: number;
  spam: number;
  file_bytes: number;
  stored_file_bytes: number;
  forms: (Breakdown & { form_id: string; name: string | null; slug: string | null })[];
  days: (Breakdown & { date: string })[];
}

export interface ListOf<T> {
  data: T[];
}
export interface PageOf<T> {
  data: T[];
  next_cursor: string | null;
}
