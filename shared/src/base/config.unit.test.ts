import { loadConfig, ConfigError } from './config';

describe('loadConfig', () => {
  it('applies the defaults pinned in DESIGN.md', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 8080,
      PUBLIC_BASE_URL: 'http://localhost:8080',
      PROBLEMS_URL: 'http://localhost:8080/problems',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/intake',
      NATS_URL: 'nats://127.0.0.1:4222',
      RATE_LIMIT_POINTS: 60,
      RATE_LIMIT_WINDOW_SECONDS: 600,
      WEBHOOK_RETRY_SCHEDULE: [1000, 10_000, 60_000, 600_000, 3_600_000],
      WEBHOOK_TIMEOUT_MS: 10_000,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: false,
      s3Enabled: false,
    });
    expect(config.SMTP_URL).toBeUndefined();
    expect(config.BOT_CHALLENGE_VERIFY_URL).toBeUndefined();
    // DESIGN.md's settings for the next steps: REDIS_URL unset or empty means no Redis (a per-process limiter).
    expect(config.REDIS_URL).toBeUndefined();
    expect(loadConfig({ REDIS_URL: '' }).REDIS_URL).toBeUndefined();
    expect(loadConfig({ REDIS_URL: 'redis://cache.example:6379' }).REDIS_URL).toBe('redis://cache.example:6379');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads and coerces values from the environment', () => {
    const config = loadConfig({
      PORT: '9000',
      PUBLIC_BASE_URL: 'https://forms.example.com/',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms, 2s,1m',
      S3_BUCKET: 'files',
    });
    expect(config.PORT).toBe(9000);
    expect(config.PUBLIC_BASE_URL).toBe('https://forms.example.com');
    expect(config.PROBLEMS_URL).toBe('https://forms.example.com/problems');
    expect(config.WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(true);
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([100, 2000, 60_000]);
    expect(config.s3Enabled).toBe(true);
  });

  it('keeps an explicit PROBLEMS_URL', () => {
    expect(loadConfig({ PROBLEMS_URL: 'https://docs.example.com/problems/' }).PROBLEMS_URL).toBe(
      'https://docs.example.com/problems',
    );
  });

  it.each([
    ['PORT', 'eighty', /PORT/],
    ['PORT', '70000', /PORT/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL/],
    ['WEBHOOK_RETRY_SCHEDULE', '1s,soon', /WEBHOOK_RETRY_SCHEDULE/],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'yes', /WEBHOOK_ALLOW_PRIVATE_NETWORKS/],
    ['REDIS_URL', 'localhost:6379', /REDIS_URL/],
  ])('names the variable when %s is %s', (name, value, pattern) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(pattern);
  });

  it('requires SECRETS_KEY in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SECRETS_KEY/);
    expect(loadConfig({ NODE_ENV: 'production', SECRETS_KEY: 'a-long-enough-secret-key' }).SECRETS_KEY).toBe(
      'a-long-enough-secret-key',
    );
  });

  it('refuses in production every SECRETS_KEY written in the repository, saying how to make one', () => {
    const published = [
      loadConfig({}).SECRETS_KEY, // the built-in development key
      'compose-development-secrets-key-change-me',
      'test-secrets-key-0123456789abcdef',
      'bench-secrets-key-0123456789',
    ];
    for (const key of published) {
      expect(() => loadConfig({ NODE_ENV: 'production', SECRETS_KEY: key })).toThrow(/published.*openssl rand/);
      expect(loadConfig({ NODE_ENV: 'development', SECRETS_KEY: key }).SECRETS_KEY).toBe(key);
    }
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/openssl rand -base64 32/);
  });
});

describe('loadConfig: a wrong value in the error', () => {
  it.each([
    [
      'DATABASE_URL',
      'postgresx://postgres:PGPASS_SECRET_9917@127.0.0.1:5432/x',
      '"postgresx://[redacted]@127.0.0.1:5432/x"',
    ],
    ['REDIS_URL', 'redis//:REDISPASS_SECRET_4412@127.0.0.1:16700', '"redis//:[redacted]@127.0.0.1:16700"'],
    ['SMTP_URL', 'smtpx://u:SMTPPASS_SECRET_5521@127.0.0.1:25', '"smtpx://[redacted]@127.0.0.1:25"'],
    ['DATABASE_URL', 'mysql://db.example/x?password=PGPASS_SECRET_9917', '"mysql://db.example/x?[redacted]"'],
    ['SECRETS_KEY', 'SHORTKEY_SECRET', '15 characters, not shown'],
  ])(
    'never prints a credential in %s when its value is wrong, and still shows the part to fix',
    (name, value, shown) => {
      let message = '';
      try {
        loadConfig({ [name]: value });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toContain(`${name} `);
      expect(message).toContain(`(got ${shown})`);
      expect(message).not.toMatch(/SECRET_\d+|SHORTKEY/);
    },
  );
});

describe('loadConfig: credentials and TLS', () => {
  it('refuses incomplete or conflicting NATS credentials and TLS files it cannot read, naming them', () => {
    expect(() => loadConfig({ NATS_USER: 'intake' })).toThrow(/NATS_USER and NATS_PASSWORD go together/);
    expect(() => loadConfig({ NATS_USER: 'a', NATS_PASSWORD: 'b', NATS_TOKEN: 'c' })).toThrow(
      /one way to authenticate to NATS, not NATS_USER and NATS_TOKEN/,
    );
    expect(() => loadConfig({ NATS_TLS_CERT_FILE: __filename })).toThrow(/NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE/);
    expect(() => loadConfig({ NATS_TLS_CA_FILE: '/nonexistent/ca.pem' })).toThrow(
      'NATS_TLS_CA_FILE names a file that cannot be read: /nonexistent/ca.pem',
    );
    expect(() => loadConfig({ DATABASE_CA_FILE: '/nonexistent/ca.pem' })).toThrow(/DATABASE_CA_FILE/);
    expect(() => loadConfig({ REDIS_URL: 'redis://cache.example:6379', REDIS_CA_FILE: __filename })).toThrow(
      /REDIS_CA_FILE is for TLS: REDIS_URL must then start with rediss:/,
    );
  });

  it('verifies Postgres against DATABASE_CA_FILE, whatever sslmode the URLs had', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://intake@db.example:5432/intake?sslmode=require',
      DATABASE_DIRECT_URL: 'postgres://intake@db-rw.example:5432/intake',
      DATABASE_CA_FILE: __filename,
    });
    for (const url of [config.DATABASE_URL, config.DATABASE_DIRECT_URL]) {
      const { searchParams } = new URL(url);
      expect([searchParams.get('sslmode'), searchParams.get('sslrootcert')]).toEqual(['verify-full', __filename]);
    }
    const plain = loadConfig({ DATABASE_URL: 'postgres://intake@db.example/intake' });
    // Without a CA the URLs stay as given; without DATABASE_DIRECT_URL, Postgres itself is DATABASE_URL.
    expect([plain.DATABASE_URL, plain.DATABASE_DIRECT_URL]).toEqual([
      'postgres://intake@db.example/intake',
      'postgres://intake@db.example/intake',
    ]);
  });
});
