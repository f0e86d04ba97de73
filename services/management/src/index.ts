import { type Config, type Platform, type RouteList, type ServiceModule } from '@intake/shared';
import { startRetentionSweeper } from './domain/retention';
import { apiKeyRoutes } from './routes/api-keys.routes';
import { healthRoutes } from './routes/health.routes';
import { formRoutes } from './routes/forms.routes';
import { projectRoutes } from './routes/projects.routes';
import { dashboardRoutes } from './routes/dashboard.routes';
import { docsRoutes } from './routes/docs.routes';
import { submissionRoutes } from './routes/submissions.routes';
import { fileRoutes } from './routes/files.routes';
import { webhookRoutes } from './routes/webhooks.routes';
import { deliveryRoutes } from './routes/deliveries.routes';
import { openApiDocument } from './openapi';
import { sessionRoutes } from './routes/sessions.routes';
import { consoleSupportRoutes } from './routes/console-support.routes';
import { inboxRoutes } from './routes/inbox.routes';
import { mountConsole } from './platform/console-page';
import { mountSso } from './routes/sso.routes';
import { startPurger } from './domain/purge';
import { dataSubjectRoutes } from './routes/data-subjects.routes';
import { memberRoutes } from './routes/members.routes';
import { peopleRoutes } from './routes/people.routes';
import { memberSessionRoutes } from './routes/member-sessions.routes';
import { twoFactorRoutes } from './routes/two-factor.routes';
import { accountRoutes } from './routes/account.routes';
import { accountCreationRoutes } from './routes/accounts.routes';
import { auditLogRoutes } from './routes/audit-log.routes';
import { spamRoutes } from './routes/spam.routes';
import { viewRoutes } from './routes/views.routes';
import { withAuditTrail } from './domain/audit-trail';
import { startSearchIndexer } from './domain/search-indexer';
import { startUpkeep } from './domain/upkeep';

/** Management's routes, in the order the OpenAPI document lists them; `/openapi` serves the document of all four services. */
function managementRoutes(settings: { config: Config }): RouteList<Platform> {
  return withAuditTrail([
    ...healthRoutes,
    ...apiKeyRoutes,
    ...projectRoutes,
    ...dashboardRoutes,
    ...formRoutes,
    ...submissionRoutes,
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
  ]);
}

/** The management service: forms, submissions, webhooks, deliveries, API keys, health, OpenAPI, docs, problem types. */
export const managementService: ServiceModule<Platform> = {
  name: 'management',
  publishesEvents: true,
  routes: managementRoutes,
  // Management keeps no per-process state of its own: its handlers get the platform.
  compose: (platform) => platform,
  // Management always runs, so it keeps the bookkeeping tables from growing (see domain/retention.ts).
  startWorkers: async (platform) => [
    startRetentionSweeper(platform),
    // Removes what forms' retention settings make due (domain/purge.ts).
    startPurger({
      ...platform,
      intervalMs: platform.config.PURGE_INTERVAL_SECONDS * 1000,
      trashDays: platform.config.TRASH_DAYS,
    }),
    ...startUpkeep(platform),
    // Keeps the search index current, off ingest's write path (domain/search-indexer.ts).
    startSearchIndexer(platform),
  ],
  // The web console at /console (built into dist/console by `npm run build`); / redirects there. Single sign-on's
  // redirects under /console/auth come first.
  extend: (app, router, platform) => {
    mountSso(app, platform);
    mountConsole(app, router, platform);
  },
};

/** The one OpenAPI document of the four services (what `GET /openapi` serves), from the configuration alone. */
export function openApi(settings: { config: Config }): Record<string, unknown> {
  return openApiDocument(settings.config, managementRoutes(settings));
}

export { createAccount } from './domain/accounts';
export { runAdmin } from './cli/admin';
