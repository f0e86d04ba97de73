import type { Knex } from 'knex';
import * as schema from './001-schema';
import * as storeSubmissions from './002-store-submissions';
import * as consumerLeases from './003-consumer-leases';

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order. Add new ones at the end with the next number. */
export const migrations: Migration[] = [
  { name: '001-schema', ...schema },
  { name: '002-store-submissions', ...storeSubmissions },
  { name: '003-consumer-leases', ...consumerLeases },
];

/**
 * The migrations of the development history, folded into the two above before the first release.
 * A database migrated by all of them has the same schema plus the compatibility shims the fold
 * dropped (see adoptPreReleaseSchema in db.ts).
 */
export const PRE_RELEASE_MIGRATIONS = [
  '001-initial',
  '040-usage-indexes',
  '090-json-field-order',
  '100-ingest-store-procedure',
  '120-submission-write-path',
  '130-ingest-batch-store',
] as const;
