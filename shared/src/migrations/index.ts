import type { Knex } from 'knex';
import * as initial from './001-initial';

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order. Add new ones at the end with the next number. */
export const migrations: Migration[] = [{ name: '001-initial', ...initial }];
