import { type Queryable } from '@intake/shared/base';
import {
  type ChallengeProvider,
  type FormStatus,
  type SpamFilter,
  type SpamModelScope,
  type SpamRules,
  type VisitorPages,
} from '@intake/shared/contracts';

/** The form as ingest sees it, with what the checks before the body need: plan limits and this month's usage. */
export interface IngestForm {
  id: string;
  account_id: string;
  project_id: string;
  name: string;
  status: FormStatus;
  honeypot_field: string;
  bot_challenge_provider: ChallengeProvider | null;
  bot_challenge_secret: string | null;
  redirect_url: string | null;
  /** Bare origins allowed to post from a browser; empty = any. */
  allowed_origins: string[];
  spam_filter: SpamFilter;
  spam_rules: SpamRules;
  /** Whose classifier judges its posts: its project's or its own. */
  spam_model: SpamModelScope;
  monthly_quota: number;
  max_file_bytes: number;
  used: number;
  /** Posts per address and rate-limit window: the form's own (within its plan's most), null for RATE_LIMIT_POINTS. */
  rate_limit: number | null;
  /** The owner's thank-you and refusal pages (null: Intake's own, in the visitor's language). */
  pages: VisitorPages | null;
}

/** One query for everything the checks before the body need. `period` is the `YYYY-MM-01` of the current UTC month. */
export async function findFormBySlug(db: Queryable, slug: string, period: string): Promise<IngestForm | undefined> {
  const row = await db('forms as f')
    .join('accounts as a', 'a.id', 'f.account_id')
    .join('plans as p', 'p.id', 'a.plan_id')
    .leftJoin('usage_counters as u', (j) =>
      j.on('u.account_id', 'f.account_id').andOn('u.period', db.raw('?::date', [period])),
    )
    .where('f.slug', slug)
    .whereNull('f.deleted_at')
    .first(
      'f.id',
      'f.account_id',
      'f.project_id',
      'f.name',
      'f.status',
      'f.honeypot_field',
      'f.bot_challenge_provider',
      'f.bot_challenge_secret',
      'f.redirect_url',
      'f.allowed_origins',
      'f.spam_filter',
      'f.spam_rules',
      'f.spam_model',
      'f.pages',
      db.raw('coalesce(a.quota_override, p.monthly_quota)::int as monthly_quota'),
      'p.max_file_bytes',
      db.raw('coalesce(u.used, 0)::int as used'),
      db.raw('(case when f.rate_limit is null then null else least(f.rate_limit, p.max_rate_limit) end) as rate_limit'),
    );
  return row as IngestForm | undefined;
}
