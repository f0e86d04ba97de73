/**
 * The shape of the code, checked by `npm test` (dependency-cruiser):
 * - no circular imports anywhere;
 * - `shared/src` is in layers, each importing only the layers below it:
 *     base (config, logger, db connections and the text Postgres stores, secrets, ordered JSON, batch queue, blob store,
 *       mailer)
 *     < contracts (what crosses a boundary, and no behaviour beyond checking it: problems, time and ids, e-mail
 *       addresses, events, forms, notifications, spam settings)
 *     < schema (the migrations, the migrator, the SQL of the tables' shape) and telemetry (metrics, spans, the SDK)
 *     < auth (API keys, console sessions, roles) and messaging (NATS, consumers, publisher, outbox, form changes, an
 *       event's fields read back)
 *     < audit (the audit log), webhooks and submissions (what two services share: the signed request, the write of a
 *       submission)
 *     < http (the problem middleware, routes, server, OpenAPI, signed file links) < runtime (platform, service,
 *       threads, health) < testing;
 *   layers of the same rank do not import each other;
 * - a service imports only its own files and `@intake/shared`'s layers, each by its entry (`@intake/shared/http`,
 *   shared/package.json's exports; no barrel of every name): management too, which serves the OpenAPI document of
 *   all four that the build writes (scripts/openapi-document.js reads the four services' route definitions);
 * - the web console (console/) imports nothing from the server but the export @intake/shared/ordered-json.
 */
const layers = [
  ['base'],
  ['contracts'],
  ['schema', 'telemetry'],
  ['auth', 'messaging'],
  ['audit', 'webhooks', 'submissions'],
  ['http'],
  ['runtime'],
  ['testing'],
];

const rank = (name) => layers.findIndex((group) => group.includes(name));
const upward = layers.flatMap((group, i) =>
  group.map((name) => {
    const notBelow = layers
      .slice(i)
      .flat()
      .filter((other) => other !== name);
    return {
      name: `shared-${name}-imports-below-only`,
      comment: `shared/src/${name} (rank ${rank(name)}) imports only layers below it`,
      severity: 'error',
      from: { path: `^shared/src/${name}/`, pathNot: '\\.test\\.ts$' },
      to: { path: `^shared/src/(${notBelow.join('|')})/` },
    };
  }),
);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circles.',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'shared-entry-points-only-at-the-root',
      comment: 'Every file of shared/src lives in a layer, except the package entry points.',
      severity: 'error',
      from: { path: '^shared/src/[^/]+\\.ts$', pathNot: '^shared/src/register\\.ts$' },
      to: {},
    },
    {
      name: 'services-import-shared-by-its-entry',
      comment:
        "A service imports @intake/shared's layers by their entries ('@intake/shared/base', …, or @intake/shared/testing " +
        'in tests), never their inner files.',
      severity: 'error',
      from: { path: '^services/[^/]+/(src|test)/' },
      to: {
        path: '^shared/',
        pathNot: '^shared/(src|dist)/(register|[a-z-]+/index)\\.(ts|js|d\\.ts)$',
      },
    },
    {
      name: 'services-import-no-other-service',
      comment:
        'A service depends only on @intake/shared. Management serves the OpenAPI document of all four services, which ' +
        'the build writes (scripts/openapi-document.js), so it does not carry the other three either.',
      severity: 'error',
      from: { path: '^services/([^/]+)/src/' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'console-imports-nothing-from-the-server',
      comment:
        'The web console (the @intake/console package) is built from its own sources and npm packages; its API types ' +
        'come from the OpenAPI document. The one exception is the export @intake/shared/ordered-json (it imports ' +
        'nothing but jsonc-parser), so API answers read as the server wrote them. Its browser tests (console/test) ' +
        'start the whole stack, so they are not held to this.',
      severity: 'error',
      from: { path: '^console/', pathNot: '^console/test/' },
      to: {
        path: '^(shared|services|src|test|integrations)/',
        pathNot: '^shared/(src|dist)/base/ordered-json[.](ts|js|d[.]ts)$',
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.tests.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
