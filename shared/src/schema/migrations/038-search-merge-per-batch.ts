import type { Knex } from 'knex';

/**
 * The search indexer merges its batch's keys into the GIN indexes itself, before it commits (`gin_clean_pending_list`,
 * management's `search.repository.ts`), so a pending list no longer has to stay small: its limit goes from 64 kB to
 * 4 MB, above one batch of 500 varied submissions (about 3.4 MB of keys), which is then merged once instead of in
 * fifty merges of a few rows each. Indexing 20,000 varied submissions (words of real mail, 177 keys each) took 9.5-13 s
 * with lists of 64 kB, 3.6 s merged a batch at a time. Between batches the lists are empty, so a search reads only the
 * index, as with 64 kB; a role that does not own the indexes cannot merge, and leaves it to the inserts at 4 MB.
 */
export async function up(knex: Knex): Promise<void> {
  for (const index of ['submission_search_keys_idx', 'submission_search_emails_idx'])
    await knex.raw(`ALTER INDEX ${index} SET (gin_pending_list_limit = 4096)`);
}

export async function down(knex: Knex): Promise<void> {
  for (const index of ['submission_search_keys_idx', 'submission_search_emails_idx'])
    await knex.raw(`ALTER INDEX ${index} SET (gin_pending_list_limit = 64)`);
}
