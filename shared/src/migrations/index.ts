import type { Knex } from 'knex';
import * as initial from './001-initial';
import * as usageIndexes from './040-usage-indexes';
import * as jsonFieldOrder from './090-json-field-order';
import * as ingestStoreProcedure from './100-ingest-store-procedure';
import * as submissionWritePath from './120-submission-write-path';
import * as ingestBatchStore from './130-ingest-batch-store';
import * as consumerLeases from './140-consumer-leases';

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order. Add new ones at the end with the next number. */
export const migrations: Migration[] = [
  { name: '001-initial', ...initial },
  { name: '040-usage-indexes', ...usageIndexes },
  { name: '090-json-field-order', ...jsonFieldOrder },
  { name: '100-ingest-store-procedure', ...ingestStoreProcedure },
  { name: '120-submission-write-path', ...submissionWritePath },
  { name: '130-ingest-batch-store', ...ingestBatchStore },
  { name: '140-consumer-leases', ...consumerLeases },
];
