/** The telemetry layer of @intake/shared, imported as '@intake/shared/telemetry' (see .dependency-cruiser.cjs for what it may import). */
export * from './signals';
export { OnRequestMetricReader } from './thread-metrics';
export * from './sdk';
