/** The baseline: a bare Koa server doing one durable Postgres insert per request (no parsing rules, no checks). */
const Koa = require('koa');
const pg = require('pg');

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST') {
    ctx.body = 'ok';
    return;
  }
  const chunks = [];
  for await (const c of ctx.req) chunks.push(c);
  const { rows } = await pool.query('INSERT INTO bench_bare (body) VALUES ($1) RETURNING id', [
    Buffer.concat(chunks).toString('utf8'),
  ]);
  ctx.status = 201;
  ctx.body = { id: rows[0].id };
});
pool
  .query(
    'CREATE TABLE IF NOT EXISTS bench_bare (id bigserial PRIMARY KEY, body text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
  )
  .then(() => app.listen(Number(process.env.PORT), '127.0.0.1'));
