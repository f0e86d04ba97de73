#!/usr/bin/env node
/**
 * `npm run docs:config`: writes docs/configuration.md from the settings' schema (`settingsSchema`,
 * shared/src/base/config.ts), read from the built shared/dist: each setting's name, default and description, a table
 * per group. test/configuration-doc.test.ts renders the schema from the source and fails when the committed file
 * differs. A setting without a description, or in no group below, stops the render with the setting named. Markdown
 * is not Prettier's (.prettierignore), so the tables stay compact, one line a setting, as the README's.
 */
const fs = require('node:fs');
const path = require('node:path');

const TARGET = path.join(__dirname, '..', 'docs', 'configuration.md');

/** The sections of the page, in order, and the settings each lists (every setting is in exactly one). */
const GROUPS = [
  {
    title: 'Server',
    settings: [
      'PORT',
      'PUBLIC_BASE_URL',
      'PROBLEMS_URL',
      'SHUTDOWN_DELAY_SECONDS',
      'TRUST_PROXY',
      'TRUSTED_PROXY_HOPS',
    ],
  },
  {
    title: 'Postgres',
    settings: ['DATABASE_URL', 'DATABASE_DIRECT_URL', 'DATABASE_CA_FILE', 'PG_POOL_MAX', 'MIGRATION_LOCK_WAIT_SECONDS'],
  },
  {
    title: 'NATS',
    settings: [
      'NATS_URL',
      'NATS_PREFIX',
      'NATS_USER',
      'NATS_PASSWORD',
      'NATS_TOKEN',
      'NATS_CREDS_FILE',
      'NATS_NKEY_SEED_FILE',
      'NATS_TLS_CA_FILE',
      'NATS_TLS_CERT_FILE',
      'NATS_TLS_KEY_FILE',
      'NATS_REFUSED_LIVENESS_SECONDS',
    ],
  },
  {
    title: 'JetStream streams',
    settings: [
      'NATS_STREAM_REPLICAS',
      'NATS_EVENTS_MAX_BYTES',
      'NATS_DELIVERIES_MAX_BYTES',
      'NATS_EVENTS_MAX_AGE',
      'NATS_STREAM_MAX_BYTES',
    ],
  },
  {
    title: 'Redis and the rate limit',
    settings: ['REDIS_URL', 'REDIS_CA_FILE', 'RATE_LIMIT_POINTS', 'RATE_LIMIT_WINDOW_SECONDS'],
  },
  { title: 'Ingest', settings: ['FORM_CACHE_MS', 'BOT_CHALLENGE_VERIFY_URL'] },
  {
    title: 'Files',
    settings: [
      'S3_BUCKET',
      'S3_ENDPOINT',
      'S3_REGION',
      'S3_FORCE_PATH_STYLE',
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'FILES_DIR',
    ],
  },
  { title: 'Mail', settings: ['SMTP_URL', 'MAIL_FROM'] },
  {
    title: 'Webhooks and delivery',
    settings: [
      'WEBHOOK_RETRY_SCHEDULE',
      'WEBHOOK_TIMEOUT_MS',
      'SEND_CONCURRENCY',
      'WEBHOOK_ENDPOINT_CONCURRENCY',
      'SEND_MAX_ACK_PENDING',
      'RECONCILE_AFTER',
      'WEBHOOK_FAILURE_ALERT_AFTER',
      'WEBHOOK_DISABLE_AFTER',
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
    ],
  },
  {
    title: "Integrations' endpoints",
    settings: ['GOOGLE_OAUTH_TOKEN_URL', 'GOOGLE_SHEETS_API_URL', 'AIRTABLE_API_URL', 'NOTION_API_URL'],
  },
  { title: 'Secrets and keys', settings: ['SECRETS_KEY', 'KEY_MINT_LIMIT', 'KEY_MINT_WINDOW_SECONDS'] },
  {
    title: 'Accounts and single sign-on',
    settings: [
      'ACCOUNT_CREATION',
      'OIDC_ISSUER',
      'OIDC_CLIENT_ID',
      'OIDC_CLIENT_SECRET',
      'OIDC_ALLOWED_DOMAINS',
      'OIDC_AUTO_JOIN_ACCOUNT',
      'OIDC_AUTO_JOIN_ROLE',
      'OIDC_ONLY',
    ],
  },
  { title: 'Retention', settings: ['PURGE_INTERVAL_SECONDS', 'TRASH_DAYS', 'AUDIT_RETENTION_DAYS'] },
  { title: 'Logs and telemetry', settings: ['LOG_LEVEL', 'NODE_ENV', 'METRICS_PORT'] },
];

const INTRO = `# Configuration

Every setting Intake reads from the environment. This page is generated from the settings' schema
(\`shared/src/base/config.ts\`) by \`npm run docs:config\`: change a setting there, then run it.

Each process reads its settings once at start and validates them; a wrong value stops it with the setting named (a
credential's value is never shown). An empty value counts as unset; a boolean is \`true\`, \`false\`, \`1\` or \`0\`.
The OpenTelemetry SDK reads the standard \`OTEL_*\` variables itself: telemetry is off unless an OTLP endpoint or
\`METRICS_PORT\` is set. The Helm chart sets these from its values (\`deploy/helm/intake/values.yaml\`).
`;

/** A setting's default as the page shows it. */
function defaultOf(setting) {
  if (setting.default === undefined) return 'unset';
  return `\`${String(setting.default)}\``;
}

/** What a setting accepts, as its type says: an integer's range, a choice's values, a boolean, a URL, else text. */
function acceptsOf(setting) {
  if (Array.isArray(setting.anyOf)) return setting.anyOf.map((s) => `\`${s.const}\``).join(', ');
  if (setting.type === 'boolean') return '`true`, `false`';
  if (setting.format === 'uri') return 'a URL';
  if (setting.type !== 'integer') return 'text';
  const { minimum: min, maximum: max } = setting;
  if (min !== undefined && max !== undefined) return `${min}–${max}`;
  return min === undefined ? 'an integer' : `≥ ${min}`;
}

/** Markdown of a description: `<` and `>` outside code spans escaped, so `<PREFIX>` is not read as a tag. */
function markdownOf(text) {
  return text
    .split('`')
    .map((part, i) => (i % 2 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;')))
    .join('`')
    .replace(/\|/g, '\\|');
}

function row(name, setting) {
  return `| \`${name}\` | ${defaultOf(setting)} | ${acceptsOf(setting)} | ${markdownOf(setting.description)} |`;
}

/** Every setting in exactly one group, with a description; else the setting is named. */
function checkSettings(schema) {
  const grouped = GROUPS.flatMap((g) => g.settings);
  const names = Object.keys(schema.properties);
  const problems = [
    ...names.filter((n) => !grouped.includes(n)).map((n) => `${n} is in no group of scripts/configuration-doc.js`),
    ...grouped.filter((n) => !names.includes(n)).map((n) => `${n} is not a setting of shared/src/base/config.ts`),
    ...grouped.filter((n, i) => grouped.indexOf(n) !== i).map((n) => `${n} is in two groups`),
    ...names.filter((n) => !schema.properties[n].description).map((n) => `${n} has no description in its schema`),
  ];
  if (problems.length) throw new Error(`Cannot render docs/configuration.md: ${problems.join('; ')}`);
}

/** The page for `schema` (the TypeBox object of every setting). */
function renderConfiguration(schema) {
  checkSettings(schema);
  const sections = GROUPS.map((group) =>
    [
      `## ${group.title}`,
      '',
      '| setting | default | accepts | what it does |',
      '| --- | --- | --- | --- |',
      ...group.settings.map((name) => row(name, schema.properties[name])),
    ].join('\n'),
  );
  return `${[INTRO.trimEnd(), ...sections].join('\n\n')}\n`;
}

function main() {
  const { settingsSchema } = require('../shared/dist/base/config.js');
  fs.writeFileSync(TARGET, renderConfiguration(settingsSchema));
  console.log(`wrote ${path.relative(process.cwd(), TARGET)}`);
}

module.exports = { renderConfiguration, TARGET };

if (require.main === module) {
  try {
    main();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
