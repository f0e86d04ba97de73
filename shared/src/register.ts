/**
 * Import this FIRST in an entry point (`import '@intake/shared/register'`): it starts
 * OpenTelemetry before koa, pg, ioredis and http are loaded, so their instrumentations patch
 * them. Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or a traces/metrics endpoint) is set.
 * The service name is OTEL_SERVICE_NAME, else derived from the entry script's path.
 */
import { serviceNameFromEntry, startTelemetry } from './telemetry/sdk';

// An entry point, like main.ts: the one place besides config.ts that reads the environment.
// eslint-disable-next-line no-restricted-properties
startTelemetry({ serviceName: serviceNameFromEntry(process.argv[1]), env: process.env });
