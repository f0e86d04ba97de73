import type { Knex } from 'knex';
import * as initial from './001-initial';
import * as usageIndexes from './040-usage-indexes';
import * as jsonFieldOrder from './090-json-field-order';

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
];
