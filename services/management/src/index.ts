import { type Config } from '@intake/shared/base';
import { type RouteList } from '@intake/shared/http';
import { type Platform, type ServiceModule } from '@intake/shared/runtime';
import { startRetentionSweeper } from './lifecycle/retention';
import { apiKeyRoutes } from './people/api-keys.routes';
import { healthRoutes } from './platform/health.routes';
import { formRoutes } from './submissions/forms.routes';
import { projectRoutes } from './submissions/projects.routes';
import { dashboardRoutes } from './submissions/dashboard.routes';
import { docsRoutes } from './platform/docs.routes';
import { submissionRoutes } from './submissions/submissions.routes';
import { accountSubmissionRoutes } from './submissions/account-submissions.routes';
import { fileRoutes } from './submissions/files.routes';
import { webhookRoutes } from './webhooks/webhooks.routes';
import { deliveryRoutes } from './webhooks/deliveries.routes';
import { openApiFor } from './platform/openapi';
import { builtOpenApi } from './platform/built-openapi';
import { sessionRoutes } from './people/sessions.routes';
import { consoleSupportRoutes } from './webhooks/console-support.routes';
import { inboxRoutes } from './submissions/inbox.routes';
import { mountConsole } from './platform/console-page';
import { mountSso } from './people/sso.routes';
import { startPurger } from './lifecycle/purge';
import { dataSubjectRoutes } from './lifecycle/data-subjects.routes';
import { memberRoutes } from './people/members.routes';
import { peopleRoutes } from './people/people.routes';
import { memberSessionRoutes } from './people/member-sessions.routes';
import { twoFactorRoutes } from './people/two-factor.routes';
import { accountRoutes } from './people/account.routes';
import { accountCreationRoutes } from './people/accounts.routes';
import { auditLogRoutes } from './platform/audit-log.routes';
import { spamRoutes } from './submissions/spam.routes';
import { viewRoutes } from './submissions/views.routes';
import { startSearchIndexer } from './submissions/search-indexer';
import { startUpkeep } from './lifecycle/upkeep';

/** Management's routes, in the order the OpenAPI document lists them; `/openapi` serves the document of all four services. */
function managementRoutes(settings: { config: Config }): RouteList<Platform> {
  return [
    ...healthRoutes,
    ...apiKeyRoutes,
    ...projectRoutes,
    ...dashboardRoutes,
    ...formRoutes,
    ...submissionRoutes,
    ...accountSubmissionRoutes,
    ...fileRoutes,
    ...webhookRoutes,
    ...deliveryRoutes,
    ...dataSubjectRoutes,
    ...sessionRoutes,
    ...consoleSupportRoutes,
    ...memberRoutes,
    ...peopleRoutes,
    ...memberSessionRoutes,
    ...twoFactorRoutes,
    ...accountRoutes,
    ...accountCreationRoutes,
    ...auditLogRoutes,
    ...inboxRoutes,
    ...viewRoutes,
    ...spamRoutes,
    ...docsRoutes(settings.config, () => openApi(settings)),
  ];
}

/** The management service: forms, submissions, webhooks, deliveries, API keys, health, OpenAPI, docs, problem types. */
export const managementService: ServiceModule<Platform> = {
  name: 'management',
  publishesEvents: true,
  routes: managementRoutes,
  // Management keeps no per-process state of its own: its handlers get the platform.
  compose: (platform) => platform,
  // Management always runs, so it keeps the bookkeeping tables from growing (see lifecycle/retention.ts).
  startWorkers: async (platform) => [
    startRetentionSweeper(platform),
    // Removes what forms' retention settings make due (lifecycle/purge.ts).
    startPurger({
      ...platform,
      intervalMs: platform.config.PURGE_INTERVAL_SECONDS * 1000,
      trashDays: platform.config.TRASH_DAYS,
    }),
    ...startUpkeep(platform),
    // Keeps the search index current, off ingest's write path (submissions/search-indexer.ts).
    startSearchIndexer(platform),
  ],
  // The web console at /console (the @intake/console package's built files); / redirects there. Single sign-on's
  // redirects under /console/auth come first.
  extend: (app, router, platform) => {
    mountSso(app, platform);
    mountConsole(app, router, platform);
  },
};

/**
 * The one OpenAPI document of the four services (what `GET /openapi` serves): the one the build wrote
 * (scripts/openapi-document.js), with the configuration's server URL and problem-type paths.
 */
export function openApi(settings: { config: Config }): Record<string, unknown> {
  return openApiFor(builtOpenApi(), settings.config);
}

export { BUILD_SETTINGS, OPENAPI_FILE, openApiDocument } from './platform/openapi';

export { createAccount } from './people/accounts';
export { runAdmin } from './cli/admin';
