import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A query of the database: knex called on a table (`db('forms')`, `platform.db('forms')`), raw SQL, the schema. */
const queryOutsideRepository = [
  "CallExpression[callee.type='Identifier'][callee.name=/^(db|trx|knex)$/]",
  "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(db|trx|knex)$/]",
  'CallExpression[callee.object.name=/^(db|trx|knex)$/][callee.property.name=/^(select|insert|update|del|delete|from|with|table|into|count|first)$/]',
  'MemberExpression[property.name=/^(raw|fn|queryBuilder)$/]',
  "MemberExpression[property.name='schema'][object.name=/^(db|trx|knex)$/]",
  // A driver's own client (`client.query(sql)`).
  "CallExpression[callee.property.name='query']",
].map((selector) => ({ selector, message: 'A query goes in a *.repository.ts; call a repository function here.' }));

const nothingAfterSpread = {
  selector: 'ObjectExpression > SpreadElement ~ *',
  message:
    'Nothing after a spread on the per-post path: V8 makes a new hidden class for every such object. Write the properties out, or use Object.assign.',
};

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'coverage/**',
      'deploy/**',
      'console/src/openapi.d.ts',
      'console/src/operation-roles.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration through loadConfig() in shared/src/base/config.ts.',
        },
      ],
    },
  },
  // Services depend only on @intake/shared: no service's source imports another service (by package
  // name or by path). The OpenAPI aggregator is the one exception: it reads the others' route definitions.
  ...['ingest', 'management', 'delivery', 'usage'].map((service) => ({
    files: [`services/${service}/src/**/*.ts`],
    ignores: ['services/management/src/platform/openapi.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^@intake/(?!shared(?:/|$)|${service}$)`,
              message: 'A service depends only on @intake/shared (webhooks, events, db helpers live there).',
            },
            {
              regex: '(?:^|/)services/|^(?:\\.\\./){2,}',
              message: 'A service imports only its own files and @intake/shared.',
            },
          ],
        },
      ],
    },
  })),
  // Every service's SQL lives in its repositories (`*.repository.ts`): a route, a domain function, a consumer or the
  // CLI calls one, and holds a transaction at most (`db.transaction`), never a query of its own. shared/src is outside
  // the rule: its runtime parts (the migrator, the outbox relay, sessions, the audit writer…) are their own repositories.
  // Ingest's block below repeats these selectors (a file's later `no-restricted-syntax` replaces an earlier one).
  {
    files: ['services/*/src/**/*.ts'],
    ignores: ['**/*.repository.ts'],
    rules: { 'no-restricted-syntax': ['error', ...queryOutsideRepository] },
  },
  // The unit part of the suite starts no process of its own (jest.config.js): a workspace test that needs a server or a
  // child process of its own is named `*.process.test.ts` and runs in the system part.
  {
    files: ['shared/src/**/*.test.ts', 'services/*/test/**/*.ts', 'console/src/**/*.test.ts'],
    ignores: ['**/*.process.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['node:child_process', 'child_process'].map((name) => ({
            name,
            message: 'A test that starts a process is a *.process.test.ts (the system part of the suite).',
          })),
          patterns: [
            {
              group: ['**/testing/processes'],
              message: 'A test that starts a server of its own is a *.process.test.ts (the system part of the suite).',
            },
            {
              regex: '^@intake/shared/testing$',
              importNames: ['startNatsServer', 'startPostgres', 'startRedisServer', 'ownProcess'],
              message: 'A test that starts a server of its own is a *.process.test.ts (the system part of the suite).',
            },
          ],
        },
      ],
    },
  },
  // What runs for every post. V8 gives an object literal with anything after a spread
  // (`{ ...a, b }`, `{ ...a, ...b }`) a new hidden class on every call: about 1 µs and a map for the
  // old generation's collector each time (measured on Node 20's V8).
  {
    files: ['services/ingest/src/**/*.ts', 'shared/src/submissions/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', nothingAfterSpread] },
  },
  {
    files: ['services/ingest/src/**/*.ts'],
    ignores: ['**/*.repository.ts'],
    rules: { 'no-restricted-syntax': ['error', nothingAfterSpread, ...queryOutsideRepository] },
  },
  // Functions and components of at most 80 lines (blank lines and comments aside) in every source file: services,
  // shared, the web console, tests, benchmarks and scripts. The migration that declares the tables (one CREATE after
  // another) is the one exception.
  {
    files: ['**/*.{ts,tsx,js,mjs,cjs}'],
    ignores: ['shared/src/schema/migrations/001-schema.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        exports: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        __filename: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        fetch: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        performance: 'readonly',
        global: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-restricted-properties': 'off' },
  },
  {
    files: [
      '**/*.test.ts',
      '**/testing/**',
      '**/main.ts',
      '**/all-in-one.ts',
      '**/all-in-one-background.ts',
      'shared/src/runtime/background-thread.ts',
      '**/cli/**',
      '**/config.ts',
      '**/service.ts',
      '**/test/**',
      'bench/**',
      'scripts/**',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
);
