// Export benchmark: 100,000 submissions streamed as CSV and NDJSON; prints time, bytes and peak memory.
// Run: npx tsc -b && node services/management/bench/export.js [rows]   (uses DATABASE_URL's server, database intake_bench)
'use strict';
const { buildServiceApp, createPlatform, closePlatform } = require('@intake/shared/runtime');
const { loadConfig } = require('@intake/shared/base');
const { newId } = require('@intake/shared/contracts');
const { listen } = require('@intake/shared/testing');
const { managementService } = require('../dist');

async function main() {
  const rows = Number(process.argv[2] ?? 100_000);
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/intake';
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: base.replace(/\/[^/]*$/, '/intake_bench'),
    LOG_LEVEL: 'warn',
    NATS_PREFIX: 'intakebench',
  });
  const platform = await createPlatform(config, { service: 'bench', migrate: true });
  const accountId = newId('account');
  const formId = newId('form');
  await platform.db('accounts').insert({ id: accountId, name: 'bench', plan_id: 'team' });
  await platform
    .db('forms')
    .insert({ id: formId, account_id: accountId, name: 'bench', slug: `bench-${formId.slice(-8)}` });
  const { key, prefix, hash } = require('@intake/shared/auth').generateKey('management');
  await platform
    .db('api_keys')
    .insert({ id: newId('apiKey'), account_id: accountId, type: 'management', prefix, key_hash: hash });
  await platform.db.raw(
    `INSERT INTO submissions (id, account_id, form_id, status, payload, received_at)
     SELECT ? || lpad(i::text, 10, '0'), ?, ?, 'received',
            jsonb_build_object('name', 'Person ' || i, 'email', 'p' || i || '@example.com',
                               'message', repeat('lorem ipsum, "dolor" ', 8), 'field_' || (i % 20), 'v' || i),
            now() - (i || ' seconds')::interval
     FROM generate_series(1, ?) AS i`,
    [`sub_${formId.slice(-16)}`, accountId, formId, rows],
  );
  const server = await listen(buildServiceApp(managementService, platform).callback());
  try {
    for (const format of ['csv', 'ndjson']) {
      global.gc?.();
      const before = process.memoryUsage();
      let peakRss = before.rss;
      let peakHeap = before.heapUsed;
      const sampler = setInterval(() => {
        const m = process.memoryUsage();
        peakRss = Math.max(peakRss, m.rss);
        peakHeap = Math.max(peakHeap, m.heapUsed);
      }, 20);
      const started = performance.now();
      const res = await fetch(`${server.url}/v1/forms/${formId}/export.${format}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      let bytes = 0;
      let lines = 0;
      for await (const chunk of res.body) {
        bytes += chunk.length;
        for (const b of chunk) if (b === 10) lines++;
      }
      clearInterval(sampler);
      const ms = performance.now() - started;
      const mb = (n) => `${(n / 1048576).toFixed(1)} MB`;
      console.log(
        `${format}: ${rows} rows, ${mb(bytes)} in ${(ms / 1000).toFixed(2)} s ` +
          `(${Math.round(rows / (ms / 1000))} rows/s), ${lines} newlines; heap ${mb(before.heapUsed)} ` +
          `-> peak ${mb(peakHeap)}, rss ${mb(before.rss)} -> peak ${mb(peakRss)}`,
      );
    }
  } finally {
    await server.close();
    await platform.db('accounts').where({ id: accountId }).delete();
    await closePlatform(platform);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
