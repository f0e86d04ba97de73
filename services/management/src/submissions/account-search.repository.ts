import type { Queryable } from '@intake/shared/base';
import type { TrashedSubmissionRow } from './submission-trash.repository';

/** A submission found across forms, with its form and the form's project named (never in the trash). */
export type FoundSubmissionRow = Omit<TrashedSubmissionRow, 'deleted_at'>;

/**
 * A page of the account's received submissions whose values hold `q` (folded as the form's own search folds it,
 * migration 043), newest first, across the forms of `projects` (null: all), strictly after `after`. The walk is the
 * per-form search's (migration 016): the 30-day buckets newest first, and in each bucket every form's candidates from
 * the search index (or, for a query without terms, the bucket's rows through the form's received-time index), tested
 * exactly, sorted within the bucket; it stops once a page is full. Forms in the trash and deleted submissions are left
 * out.
 */
export async function pageOfFoundSubmissions(
  db: Queryable,
  props: {
    accountId: string;
    q: string;
    projects: string[] | null;
    after?: { at: Date; id: string };
    limit: number;
  },
): Promise<FoundSubmissionRow[]> {
  const { rows: termRows } = await db.raw<{ rows: { terms: string[] }[] }>('SELECT intake_search_terms(?) AS terms', [
    props.q,
  ]);
  const terms = termRows[0]!.terms;
  const source =
    terms.length > 0
      ? 'intake_search_candidates(f.id, b.bucket, CAST(:terms AS text[]))'
      : `(SELECT * FROM submissions x WHERE x.form_id = f.id
           AND x.received_at >= to_timestamp(CAST(b.bucket AS float8) * 2592000)
           AND x.received_at < to_timestamp(CAST(b.bucket + 1 AS float8) * 2592000))`;
  const { rows } = await db.raw<{ rows: FoundSubmissionRow[] }>(
    `WITH shown AS MATERIALIZED (
       SELECT f.id, f.name, f.project_id, p.name AS project_name, p.is_default AS project_is_default
       FROM forms f LEFT JOIN projects p ON p.id = f.project_id
       WHERE f.account_id = :account AND f.deleted_at IS NULL AND (CAST(:projects AS text[]) IS NULL OR f.project_id = ANY(CAST(:projects AS text[])))
     ),
     edges AS (
       SELECT max(m.newest) AS newest, min(m.oldest) AS oldest FROM shown f, LATERAL (
         SELECT (SELECT max(received_at) FROM submissions WHERE form_id = f.id) AS newest,
                (SELECT min(received_at) FROM submissions WHERE form_id = f.id) AS oldest
       ) m
     )
     SELECT found.* FROM edges,
       generate_series(intake_search_bucket(least(edges.newest, CAST(:afterAt AS timestamptz))),
                       intake_search_bucket(edges.oldest), -1) AS b(bucket),
       LATERAL (
         SELECT s.id, s.account_id, s.form_id, s.status, s.payload, s.file_count, s.file_bytes, s.spam_reason,
                s.spam_score, s.spam_reasons, s.received_at, s.read_at, s.purged_at, s.directions,
                f.name AS form_name, f.project_id, f.project_name, f.project_is_default
         FROM shown f CROSS JOIN LATERAL ${source} AS s
         WHERE s.account_id = :account AND s.deleted_at IS NULL AND s.status = 'received'
           AND intake_search_document(s.payload) ILIKE intake_search_pattern(:q)
           AND (CAST(:afterAt AS timestamptz) IS NULL OR (s.received_at, s.id) < (CAST(:afterAt AS timestamptz), :afterId))
         ORDER BY s.received_at DESC, s.id DESC
         LIMIT :limit
       ) AS found
     LIMIT :limit`,
    {
      account: props.accountId,
      projects: props.projects,
      terms,
      q: props.q,
      afterAt: props.after?.at ?? null,
      afterId: props.after?.id ?? null,
      limit: props.limit,
    },
  );
  return rows;
}
