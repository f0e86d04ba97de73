import Ajv from 'ajv';
import { accessSync, constants } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';

/** A duration in whole units up to days (`30m`, `1h`, `5d`), or `0`. */
const LONG_DURATION = '^\\s*(0|\\d+(ms|s|m|h|d))\\s*$';

/**
 * Every setting Intake reads from the environment, with the defaults pinned in DESIGN.md.
 * Parsed and validated once at start-up; the result is frozen and passed in as `deps.config`.
 */
const Env = Type.Object({
  PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 8080,
    description: 'the HTTP port every service (and `npm start`) listens on',
  }),
  METRICS_PORT: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 65535,
      description: 'serves the metrics as Prometheus text at /metrics on this port (beside OTLP push); unset: none',
    }),
  ),
  SHUTDOWN_DELAY_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 300,
    default: 0,
    description:
      'after SIGTERM, how long a process keeps serving (readiness 503) while its endpoints are removed from the ' +
      'Service and the ingress, before it stops listening and drains; the chart sets 5',
  }),
  PUBLIC_BASE_URL: Type.String({
    format: 'uri',
    default: 'http://localhost:8080',
    description:
      'the address clients use: ingest URLs, signed file links, the console links in mail, problem `type` URLs and the ' +
      'OpenAPI server are built from it (set it when you change PORT or put Intake behind a proxy)',
  }),
  PROBLEMS_URL: Type.Optional(
    Type.String({
      format: 'uri',
      description:
        "the base of problem documents' `type` URLs; unset: PUBLIC_BASE_URL + `/problems`, which Intake serves",
    }),
  ),
  DATABASE_URL: Type.String({
    pattern: '^postgres(ql)?://',
    default: 'postgres://postgres@127.0.0.1:5432/intake',
    description: 'Postgres (or a PgBouncer in transaction mode); the migrations create the database when the role may',
  }),
  DATABASE_DIRECT_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description:
        "Postgres itself, not a pooler, for what a transaction-mode PgBouncer cannot carry: the outbox relay's " +
        'LISTEN and the migrations (their lock); unset: DATABASE_URL',
    }),
  ),
  DATABASE_CA_FILE: Type.Optional(
    Type.String({
      description:
        "the CA (PEM) that signed Postgres's certificate: connections then use TLS and verify the server against it " +
        'and its host name (sslmode=verify-full)',
    }),
  ),
  REDIS_CA_FILE: Type.Optional(
    Type.String({ description: "the CA (PEM) that signed Redis's certificate, for a rediss:// REDIS_URL" }),
  ),
  PG_POOL_MAX: Type.Integer({
    minimum: 1,
    maximum: 500,
    default: 10,
    description:
      "connections in each process's Postgres pool (pods × PG_POOL_MAX + the relays' LISTEN within max_connections)",
  }),
  MIGRATION_LOCK_WAIT_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 86_400,
    default: 600,
    description:
      'how long a migrator waits, idle, for another one that holds the migration lock before it fails naming it ' +
      '(0: tries once); the chart sets migrations.lockWaitSeconds',
  }),
  NATS_URL: Type.String({
    default: 'nats://127.0.0.1:4222',
    description:
      'NATS with JetStream; comma-separate several servers (list every node of a cluster); a user and ' +
      'password in the URL are not used',
  }),
  NATS_PREFIX: Type.String({
    pattern: '^[a-z][a-z0-9_]{0,39}$',
    default: 'intake',
    description:
      'prefix of every subject and stream (`<PREFIX>.submission.created`, `INTAKE_EVENTS`, `INTAKE_DELIVERIES`)',
  }),
  NATS_USER: Type.Optional(Type.String({ description: 'NATS user (with NATS_PASSWORD)' })),
  NATS_PASSWORD: Type.Optional(Type.String({ description: 'the password of NATS_USER' })),
  NATS_TOKEN: Type.Optional(Type.String({ description: 'a NATS token, instead of a user' })),
  NATS_CREDS_FILE: Type.Optional(Type.String({ description: 'a NATS credentials file (user JWT and nkey seed)' })),
  NATS_NKEY_SEED_FILE: Type.Optional(Type.String({ description: 'a file holding a NATS nkey seed (SU...)' })),
  NATS_TLS_CA_FILE: Type.Optional(
    Type.String({ description: "the CA (PEM) that signed the NATS servers' certificates" }),
  ),
  NATS_TLS_CERT_FILE: Type.Optional(Type.String({ description: 'a client certificate (PEM), with NATS_TLS_KEY_FILE' })),
  NATS_TLS_KEY_FILE: Type.Optional(Type.String({ description: 'the private key (PEM) of NATS_TLS_CERT_FILE' })),
  NATS_REFUSED_LIVENESS_SECONDS: Type.Integer({
    minimum: 1,
    default: 60,
    description:
      "how long NATS may refuse this process's credentials on a reconnect (or its connection stay closed for good) " +
      'before /livez answers 503, so the pod is restarted and reads its Secret again; it keeps retrying meanwhile',
  }),
  NATS_STREAM_REPLICAS: Type.Integer({
    minimum: 1,
    maximum: 5,
    default: 1,
    description: 'replicas of every JetStream stream and durable consumer (3 on a 3-node cluster; at most the nodes)',
  }),
  NATS_EVENTS_MAX_BYTES: Type.Optional(
    Type.Integer({
      minimum: 1_048_576,
      description:
        'the most bytes the events stream (`<PREFIX>_EVENTS`) keeps, reserved up front on every replica: when full it ' +
        'drops its oldest events (unread ones too, should fan-out be that far behind: the submission reconciler then ' +
        'fans them out from Postgres). Unset: NATS_STREAM_MAX_BYTES, else a new stream is unbounded and an existing one keeps its limit',
    }),
  ),
  NATS_DELIVERIES_MAX_BYTES: Type.Optional(
    Type.Integer({
      minimum: 1_048_576,
      description:
        'the most bytes the deliveries stream (`<PREFIX>_DELIVERIES`, a work queue of requests not yet settled) ' +
        'keeps, reserved up front on every replica: when full it refuses new requests, retried until there is room. ' +
        'Unset: NATS_STREAM_MAX_BYTES, else a new stream is unbounded and an existing one keeps its limit',
    }),
  ),
  NATS_EVENTS_MAX_AGE: Type.Optional(
    Type.String({
      pattern: LONG_DURATION,
      description:
        'how long the events stream keeps an event (at least 10m): unset, a new stream keeps 7d and an existing one ' +
        "keeps its own (an operator's change stays)",
    }),
  ),
  NATS_STREAM_MAX_BYTES: Type.Optional(
    Type.Integer({
      minimum: 1_048_576,
      description:
        'deprecated: both NATS_EVENTS_MAX_BYTES and NATS_DELIVERIES_MAX_BYTES where they are unset (the same bound ' +
        'for both streams, each reserving it up front on every replica)',
    }),
  ),
  REDIS_URL: Type.Optional(
    Type.String({
      pattern: '^rediss?://',
      description:
        "Redis for ingest's rate limit, shared by every replica; unset or empty: no Redis, each process counts alone",
    }),
  ),
  S3_ENDPOINT: Type.Optional(
    Type.String({
      format: 'uri',
      description: 'an S3-compatible endpoint (MinIO, …); unset: AWS S3 in S3_REGION',
    }),
  ),
  S3_BUCKET: Type.Optional(
    Type.String({
      minLength: 3,
      description: 'the bucket that holds uploaded files; unset: files go to FILES_DIR',
    }),
  ),
  S3_REGION: Type.String({ default: 'us-east-1', description: "the bucket's region" }),
  S3_FORCE_PATH_STYLE: Type.Boolean({
    default: false,
    description: 'path-style bucket URLs (`endpoint/bucket/key`), as MinIO and most S3-compatible stores need',
  }),
  AWS_ACCESS_KEY_ID: Type.Optional(
    Type.String({
      description: "S3 credentials, with AWS_SECRET_ACCESS_KEY; unset: the AWS SDK's default chain (a pod's role, …)",
    }),
  ),
  AWS_SECRET_ACCESS_KEY: Type.Optional(Type.String({ description: 'the secret of AWS_ACCESS_KEY_ID' })),
  FILES_DIR: Type.String({
    default: '.data/files',
    description:
      'where files go without S3_BUCKET (relative to the working directory); every process that serves or deletes ' +
      'them must see the same directory',
  }),
  SMTP_URL: Type.Optional(
    Type.String({
      pattern: '^smtps?://',
      description:
        '`smtp://user:pass@host:port` (or `smtps://`), pooled (5 connections a process, 100 mails each; `?pool=false` ' +
        'opens one per mail); unset: no mail is sent: logged whole outside production, dropped with a warning ' +
        'naming recipients and subject in production',
    }),
  ),
  MAIL_FROM: Type.String({
    default: 'Intake <no-reply@localhost>',
    description: "the sender of every mail; a form's `mail_from_name` replaces only its display name",
  }),
  RATE_LIMIT_POINTS: Type.Integer({
    minimum: 1,
    default: 60,
    description: 'posts ingest accepts per client (an IPv6 client: its /64) and form in RATE_LIMIT_WINDOW_SECONDS',
  }),
  FORM_CACHE_MS: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 1000,
    description: 'how long an ingest process may use a form it read (status, plan, settings) before reading it again',
  }),
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({
    minimum: 1,
    default: 600,
    description: "the window of ingest's rate limit, in seconds",
  }),
  WEBHOOK_RETRY_SCHEDULE: Type.String({
    pattern: '^\\s*\\d+(ms|s|m|h)(\\s*,\\s*\\d+(ms|s|m|h))*\\s*$',
    default: '1s,10s,1m,10m,1h',
    description:
      'the waits before the retries of a failed webhook attempt or mail (`ms`, `s`, `m`, `h`, comma-separated): ' +
      'failed attempt n waits step n (five attempts use the first four); a shorter list repeats its last step',
  }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    default: 10000,
    description:
      'the time a receiver has for a whole webhook attempt, connection included; a worker killed mid-attempt has ' +
      'its request redelivered after twice this',
  }),
  WEBHOOK_FAILURE_ALERT_AFTER: Type.String({
    pattern: LONG_DURATION,
    default: '1h',
    description:
      "a webhook failing this long without a success: its form's notify_emails get one e-mail per streak, and the " +
      'metric intake.webhooks.failing counts it; `0`: no e-mail',
  }),
  WEBHOOK_DISABLE_AFTER: Type.String({
    pattern: LONG_DURATION,
    default: '5d',
    description:
      'a webhook failing this long without a success is disabled (`disabled_reason: "failing"`) and its form\'s ' +
      'notify_emails told; `0`: never',
  }),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Boolean({
    default: false,
    description:
      'false: webhooks only to https URLs whose host resolves to public addresses, checked at save and at every ' +
      'connection; true: also http and loopback or private targets (development and tests), and the delivery log ' +
      'then keeps no answer body from a private address',
  }),
  // Where the integrations' APIs are (see shared/src/webhooks/integrations.ts): their public addresses, changed only by
  // tests, which point them at local stand-ins.
  GOOGLE_OAUTH_TOKEN_URL: Type.String({
    format: 'uri',
    default: 'https://oauth2.googleapis.com/token',
    description:
      "the token endpoint of Google Sheets' service accounts (never a key file's own `token_uri`); for tests",
  }),
  GOOGLE_SHEETS_API_URL: Type.String({
    format: 'uri',
    default: 'https://sheets.googleapis.com',
    description: 'the Google Sheets API; for tests',
  }),
  AIRTABLE_API_URL: Type.String({
    format: 'uri',
    default: 'https://api.airtable.com',
    description: 'the Airtable API; for tests',
  }),
  NOTION_API_URL: Type.String({
    format: 'uri',
    default: 'https://api.notion.com',
    description: 'the Notion API; for tests',
  }),
  SEND_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 64,
    description: 'webhook attempts in flight per delivery process',
  }),
  SEND_MAX_ACK_PENDING: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description:
        "the send consumer's max_ack_pending: webhook requests handed out and not yet settled (in flight, deferred " +
        'for a slot, or waiting a retry step of a minute or less); unset, a new consumer gets 10,000 and an existing ' +
        "one keeps what it has (an operator's change stays)",
    }),
  ),
  RECONCILE_AFTER: Type.String({
    pattern: LONG_DURATION,
    default: '15m',
    description:
      'a delivery or mail still waiting this long after it was made, or after the pump asked for it, is asked for ' +
      'again: a lost, purged or restored stream took its request; a received submission this old without a delivery ' +
      'for a webhook its form had is fanned out again: a lost stream, or a full bounded one, took its event',
  }),
  WEBHOOK_ENDPOINT_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 8,
    description: 'webhook attempts in flight per slow webhook (answers taking a second or more) and delivery process',
  }),
  BOT_CHALLENGE_VERIFY_URL: Type.Optional(
    Type.String({
      format: 'uri',
      description: "where ingest checks every bot-challenge token instead of the provider's own siteverify URL (tests)",
    }),
  ),
  SECRETS_KEY: Type.Optional(
    Type.String({
      minLength: 16,
      description:
        'encrypts webhook, bot-challenge and integration secrets at rest and signs file links; in production ' +
        '(NODE_ENV=production) required, and never a key written in this repository (`openssl rand -base64 32`); ' +
        'changing it makes stored secrets unreadable. Unset outside production: a development key',
    }),
  ),
  KEY_MINT_LIMIT: Type.Integer({
    minimum: 1,
    default: 20,
    description: 'API keys an account may create per KEY_MINT_WINDOW_SECONDS (beyond: 429)',
  }),
  KEY_MINT_WINDOW_SECONDS: Type.Integer({
    minimum: 1,
    default: 3600,
    description: 'the window of KEY_MINT_LIMIT, in seconds',
  }),
  TRUST_PROXY: Type.Boolean({
    default: false,
    description:
      'read the client address from X-Forwarded-For (set it behind an ingress or a gateway); it feeds the rate ' +
      'limits, the sign-in limits and the audit log',
  }),
  TRUSTED_PROXY_HOPS: Type.Integer({
    minimum: 1,
    maximum: 10,
    default: 1,
    description: 'with TRUST_PROXY: the client is the X-Forwarded-For entry this many hops from the right',
  }),
  AUDIT_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 36_500,
    default: 365,
    description: 'how long audit log entries are kept, in days (older ones are deleted every hour)',
  }),
  TRASH_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 30,
    description: 'how long deleted forms and submissions wait in the trash, restorable, before the purge removes them',
  }),
  OIDC_ISSUER: Type.Optional(
    Type.String({
      format: 'uri',
      description:
        "single sign-on: the OpenID Connect provider's issuer URL (with OIDC_CLIENT_ID); the redirect URI to register " +
        'is PUBLIC_BASE_URL + `/console/auth/callback`',
    }),
  ),
  OIDC_CLIENT_ID: Type.Optional(
    Type.String({ minLength: 1, description: "this installation's client id at the provider" }),
  ),
  OIDC_CLIENT_SECRET: Type.Optional(
    Type.String({ minLength: 1, description: "the client's secret at the provider (unset for a public client)" }),
  ),
  OIDC_ALLOWED_DOMAINS: Type.Optional(
    Type.String({
      description: 'comma-separated e-mail domains: only addresses at these may sign in with SSO; unset: any domain',
    }),
  ),
  OIDC_AUTO_JOIN_ACCOUNT: Type.Optional(
    Type.String({
      pattern: '^acc_[0-9a-hjkmnp-tv-z]{26}$',
      description: 'with OIDC_AUTO_JOIN_ROLE: a person new to the installation joins this account at first SSO sign-in',
    }),
  ),
  OIDC_AUTO_JOIN_ROLE: Type.Optional(
    Type.String({
      pattern: '^(viewer|editor|admin|owner)$',
      description: 'the role of a person who auto-joins OIDC_AUTO_JOIN_ACCOUNT: viewer, editor, admin or owner',
    }),
  ),
  OIDC_ONLY: Type.Boolean({
    default: false,
    description: 'true: password sign-in is off, members sign in with SSO only',
  }),
  ACCOUNT_CREATION: Type.Union([Type.Literal('operator'), Type.Literal('owners'), Type.Literal('anyone')], {
    default: 'owners',
    description:
      'who creates accounts: the operator CLI alone; also any owner, from the console (`owners`); also anyone, by ' +
      'signing up with an e-mail address they confirm (`anyone`)',
  }),
  PURGE_INTERVAL_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 300,
    description: 'how often the purge removes what retention and delete-after-delivery say is due',
  }),
  LOG_LEVEL: Type.Union(
    [
      Type.Literal('fatal'),
      Type.Literal('error'),
      Type.Literal('warn'),
      Type.Literal('info'),
      Type.Literal('debug'),
      Type.Literal('trace'),
      Type.Literal('silent'),
    ],
    { default: 'info', description: 'the least severe log level written (pino); logs are JSON lines on stdout' },
  ),
  NODE_ENV: Type.String({
    default: 'development',
    description:
      '`production` requires a SECRETS_KEY of your own and, without SMTP_URL, drops mail instead of logging it whole',
  }),
});
type Env = Static<typeof Env>;

/** The settings' schema: what `loadConfig` validates, and what `npm run docs:config` renders as docs/configuration.md. */
export const settingsSchema = Env;

export interface Config extends Omit<
  Env,
  | 'PROBLEMS_URL'
  | 'SECRETS_KEY'
  | 'WEBHOOK_RETRY_SCHEDULE'
  | 'WEBHOOK_FAILURE_ALERT_AFTER'
  | 'WEBHOOK_DISABLE_AFTER'
  | 'RECONCILE_AFTER'
  | 'DATABASE_DIRECT_URL'
  | 'NATS_EVENTS_MAX_AGE'
> {
  PROBLEMS_URL: string;
  /** Postgres itself, for LISTEN and the migrations: DATABASE_DIRECT_URL, else DATABASE_URL. */
  DATABASE_DIRECT_URL: string;
  SECRETS_KEY: string;
  /** WEBHOOK_RETRY_SCHEDULE in milliseconds, one entry per retry. */
  WEBHOOK_RETRY_SCHEDULE: readonly number[];
  /** Milliseconds a webhook fails without a success before its form's addresses are alerted. */
  WEBHOOK_FAILURE_ALERT_AFTER: number;
  /** Milliseconds a webhook fails without a success before it is disabled; 0 never. */
  WEBHOOK_DISABLE_AFTER: number;
  /** RECONCILE_AFTER in milliseconds. */
  RECONCILE_AFTER: number;
  /** NATS_EVENTS_MAX_AGE in milliseconds; undefined leaves an existing events stream's own. */
  NATS_EVENTS_MAX_AGE?: number;
  /** True when S3_BUCKET is set: files go to object storage instead of FILES_DIR. */
  s3Enabled: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Used only outside production when SECRETS_KEY is unset, so `npm start` works with no setup. */
const DEVELOPMENT_SECRETS_KEY = 'intake-development-secrets-key-do-not-use-in-production';

/**
 * Keys written in this repository (the built-in development key, docker-compose.yml's former default, the tests' and
 * the benchmarks'). Anyone can read them, and with one anyone can forge file links and open stored secrets.
 */
const PUBLISHED_SECRETS_KEYS: ReadonlySet<string> = new Set([
  DEVELOPMENT_SECRETS_KEY,
  'compose-development-secrets-key-change-me',
  'test-secrets-key-0123456789abcdef',
  'bench-secrets-key-0123456789',
]);

/** In production a SECRETS_KEY of the operator's own is required: none, or one of the published keys, stops the start. */
function refusePublishedSecretsKey(key: string | undefined): void {
  const how = 'generate one with `openssl rand -base64 32` and keep it (changing it makes stored secrets unreadable)';
  if (!key)
    throw new ConfigError(
      `SECRETS_KEY must be set in production (it encrypts webhook and bot-challenge secrets at rest): ${how}`,
    );
  if (PUBLISHED_SECRETS_KEYS.has(key))
    throw new ConfigError(`SECRETS_KEY is a key published in Intake's repository, not a secret: ${how}`);
}

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, removeAdditional: true });
// ajv-formats ships CommonJS with a default export
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('ajv-formats')(ajv, ['uri']);
const validateEnv = ajv.compile<Env>(Env);

/**
 * A setting's value as a configuration error shows it, since the error goes to the log: nothing of a credential
 * (`*_KEY`, `*_PASSWORD`, `*_SECRET`, `*_TOKEN`), and neither the user information nor the query of an address
 * (`postgres://user:password@host/db?password=...`), even a malformed one (`redis//:password@host`).
 */
export function printableSetting(name: string, value: string): string {
  if (/_(KEY|PASSWORD|SECRET|TOKEN)$/.test(name)) return `${value.length} characters, not shown`;
  const at = value.lastIndexOf('@');
  const scheme = /^[a-z][a-z0-9+.-]*(:\/\/|\/\/:?|:)/i.exec(value)?.[0] ?? '';
  const shown = at < 0 ? value : `${scheme}[redacted]@${value.slice(at + 1)}`;
  return `"${shown.replace(/\?.*$/s, '?[redacted]')}"`;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  if (text.trim() === '0') return 0;
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new ConfigError(`"${text}" is not a duration like 500ms, 10s, 1m or 1h`);
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}

/** Reads the configuration from `env` (process.env in main.ts), throwing a ConfigError that names the bad variable. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<Record<keyof Env, string | number | boolean>> = {},
): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(Env.properties)) {
    const value = key in overrides ? overrides[key as keyof Env] : env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const key of ['S3_FORCE_PATH_STYLE', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'TRUST_PROXY', 'OIDC_ONLY']) {
    if (typeof raw[key] === 'string' && !/^(true|false|1|0)$/.test(raw[key] as string)) {
      throw new ConfigError(`${key} must be true or false, got "${String(raw[key])}"`);
    }
    if (raw[key] === '1') raw[key] = true;
    if (raw[key] === '0') raw[key] = false;
  }
  if (!validateEnv(raw)) {
    const problems = (validateEnv.errors ?? []).map((e) => {
      const name = e.instancePath.replace(/^\//, '') || String(e.params['missingProperty'] ?? '');
      const value = name in raw ? String(env[name] ?? overrides[name as keyof Env]) : undefined;
      return `${name} ${e.message ?? 'is invalid'}${value === undefined ? '' : ` (got ${printableSetting(name, value)})`}`;
    });
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const env2 = raw as Env;
  if (env2.NODE_ENV === 'production') refusePublishedSecretsKey(env2.SECRETS_KEY);
  checkNatsCredentials(env2);
  if (env2.NATS_EVENTS_MAX_AGE !== undefined && parseDuration(env2.NATS_EVENTS_MAX_AGE) < 10 * 60_000)
    throw new ConfigError(
      'NATS_EVENTS_MAX_AGE must be at least 10m (the streams drop a message id seen again within 10 minutes)',
    );
  for (const key of ['DATABASE_CA_FILE', 'REDIS_CA_FILE'] as const) readable(key, env2[key]);
  if (env2.REDIS_CA_FILE && !env2.REDIS_URL?.startsWith('rediss://'))
    throw new ConfigError('REDIS_CA_FILE is for TLS: REDIS_URL must then start with rediss://');
  const config: Config = {
    ...env2,
    PUBLIC_BASE_URL: env2.PUBLIC_BASE_URL.replace(/\/+$/, ''),
    PROBLEMS_URL: (env2.PROBLEMS_URL ?? `${env2.PUBLIC_BASE_URL.replace(/\/+$/, '')}/problems`).replace(/\/+$/, ''),
    SECRETS_KEY: env2.SECRETS_KEY ?? DEVELOPMENT_SECRETS_KEY,
    WEBHOOK_RETRY_SCHEDULE: Object.freeze(env2.WEBHOOK_RETRY_SCHEDULE.split(',').map(parseDuration)),
    WEBHOOK_FAILURE_ALERT_AFTER: parseDuration(env2.WEBHOOK_FAILURE_ALERT_AFTER),
    WEBHOOK_DISABLE_AFTER: parseDuration(env2.WEBHOOK_DISABLE_AFTER),
    RECONCILE_AFTER: parseDuration(env2.RECONCILE_AFTER),
    NATS_EVENTS_MAX_AGE: env2.NATS_EVENTS_MAX_AGE === undefined ? undefined : parseDuration(env2.NATS_EVENTS_MAX_AGE),
    s3Enabled: Boolean(env2.S3_BUCKET),
    DATABASE_URL: verifiedFull(env2.DATABASE_URL, env2.DATABASE_CA_FILE),
    DATABASE_DIRECT_URL: verifiedFull(env2.DATABASE_DIRECT_URL ?? env2.DATABASE_URL, env2.DATABASE_CA_FILE),
  };
  return Object.freeze(config);
}

/**
 * One way to authenticate to NATS, complete, and files that can be read: a mistake stops the process at start with
 * the setting named, rather than a connection refused later.
 */
function checkNatsCredentials(env: Env): void {
  if ((env.NATS_USER === undefined) !== (env.NATS_PASSWORD === undefined))
    throw new ConfigError('NATS_USER and NATS_PASSWORD go together: set both or neither');
  const ways = [
    env.NATS_USER && 'NATS_USER',
    env.NATS_TOKEN && 'NATS_TOKEN',
    env.NATS_CREDS_FILE && 'NATS_CREDS_FILE',
    env.NATS_NKEY_SEED_FILE && 'NATS_NKEY_SEED_FILE',
  ].filter(Boolean);
  if (ways.length > 1) throw new ConfigError(`Set one way to authenticate to NATS, not ${ways.join(' and ')}`);
  if ((env.NATS_TLS_CERT_FILE === undefined) !== (env.NATS_TLS_KEY_FILE === undefined))
    throw new ConfigError('NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together: set both or neither');
  for (const key of [
    'NATS_CREDS_FILE',
    'NATS_NKEY_SEED_FILE',
    'NATS_TLS_CA_FILE',
    'NATS_TLS_CERT_FILE',
    'NATS_TLS_KEY_FILE',
  ] as const)
    readable(key, env[key]);
}

/** Refuses a setting naming a file this process cannot read. */
function readable(key: string, file: string | undefined): void {
  if (file === undefined) return;
  try {
    accessSync(file, constants.R_OK);
  } catch {
    throw new ConfigError(`${key} names a file that cannot be read: ${file}`);
  }
}

/**
 * A Postgres URL that verifies the server against `caFile`, its host name included (`sslmode=verify-full` with
 * `sslrootcert`, which node-postgres reads), whatever sslmode the URL had; the URL as it is without a CA file. Every
 * connection (the pools, the relay's LISTEN, the migrations, database creation) is made from the URL, so all use it.
 */
function verifiedFull(url: string, caFile: string | undefined): string {
  if (!caFile) return url;
  const parsed = new URL(url);
  parsed.searchParams.set('sslmode', 'verify-full');
  parsed.searchParams.set('sslrootcert', caFile);
  return parsed.toString();
}

export function usesDevelopmentSecretsKey(config: Config): boolean {
  return config.SECRETS_KEY === DEVELOPMENT_SECRETS_KEY;
}
