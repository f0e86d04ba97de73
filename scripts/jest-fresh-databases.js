/**
 * Jest's globalSetup (jest.config.js): every run starts on fresh test databases. The workers' databases
 * (`intake_test_<checkout>[_<tag>]_<worker>`, named as shared/src/testing/support.ts's testDatabaseUrl names them) are
 * dropped here and made again, migrated, by the first test of each worker. Kept from run to run on a Postgres without
 * autovacuum, they held the dead rows of every earlier run: by the third full run in one checkout the search backlog's
 * 200,000 dead rows made two search tests miss their 30 s limits.
 */
const { createHash } = require('node:crypto');
const path = require('node:path');
const pg = require('pg');

module.exports = async function freshTestDatabases() {
  const root = path.resolve(__dirname, '..');
  const checkout = createHash('sha256').update(root).digest('hex').slice(0, 8);
  const tag = (process.env.INTAKE_TEST_DB_TAG ?? '')
    .replace(/[^a-z0-9]/gi, '')
    .slice(0, 16)
    .toLowerCase();
  const name = new RegExp(`^intake_test_${checkout}${tag ? `_${tag}` : ''}_\\d+$`);
  const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT datname FROM pg_database WHERE datname LIKE 'intake\\_test\\_%'`);
    for (const { datname } of rows.filter((r) => name.test(r.datname)))
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
};
