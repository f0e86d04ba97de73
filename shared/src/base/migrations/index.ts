import type { Knex } from 'knex';
import * as schema from './001-schema';
import * as storeSubmissions from './002-store-submissions';
import * as notificationStatus from './003-notification-status';
import * as consoleSessions from './004-console-sessions';
import * as consumerLeases from './005-consumer-leases';

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order. Add new ones at the end with the next number. */
export const migrations: Migration[] = [
  { name: '001-schema', ...schema },
  { name: '002-store-submissions', ...storeSubmissions },
  { name: '003-notification-status', ...notificationStatus },
  { name: '004-console-sessions', ...consoleSessions },
  { name: '005-consumer-leases', ...consumerLeases },
];

/** The two migrations the development history was folded into (a pre-release database has their schema, not later ones'). */
export const FOLDED_MIGRATIONS = ['001-schema', '002-store-submissions'] as const;

/**
 * The migrations of the development history, folded into 001 and 002 (FOLDED_MIGRATIONS) before the first release.
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
