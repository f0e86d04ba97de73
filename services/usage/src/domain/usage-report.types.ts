/**
 * The body of `GET /v1/usage` (usage service), also read by the web console. Types only and no imports, so the
 * console can import it without pulling in anything from Node.
 */
export interface UsageBreakdown {
  received: number;
  spam: number;
  file_bytes: number;
}

export interface UsageReport {
  account_id: string;
  plan: { id: string; name: string };
  period: { month: string; start: string; end: string };
  limit: number;
  used: number;
  remaining: number;
  spam: number;
  file_bytes: number;
  stored_file_bytes: number;
  forms: (UsageBreakdown & { form_id: string; name: string | null; slug: string | null })[];
  days: (UsageBreakdown & { date: string })[];
}
