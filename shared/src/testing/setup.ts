import { metrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { Outbox } from '../messaging/outbox';
import { OnRequestMetricReader } from '../telemetry/thread-metrics';
import type { Platform } from '../runtime/platform';
import { startPlatformRelay } from '../runtime/service';
import type { Clock } from '../contracts/time';
import { createTestPlatform, type ConfigOverrides, type TestPlatform } from './support';

/** Jest's hooks, as globals (the package is compiled without Jest's types). */
const hooks = globalThis as unknown as {
  beforeAll(fn: () => Promise<unknown>, timeoutMs?: number): void;
  afterAll(fn: () => Promise<unknown>, timeoutMs?: number): void;
};

/**
 * The global meter provider for the tests of one file (or `describe` block), read on request: the function returned
 * gives the metric of that name as the code recorded it (undefined if it recorded none). Disabled after them.
 */
export function useMetrics() {
  const reader = new OnRequestMetricReader();
  const provider = new MeterProvider({ readers: [reader] });
  hooks.beforeAll(async () => metrics.setGlobalMeterProvider(provider));
  hooks.afterAll(async () => {
    metrics.disable();
    await provider.shutdown();
  });
  return async (name: string) => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  };
}

/**
 * A real test platform for the tests of one file (or `describe` block): created before them,
 * closed after them. The returned object is filled in by the `beforeAll` hook, so read its
 * members inside tests and hooks only.
 */
export function useTestPlatform(overrides: ConfigOverrides = {}, options: { clock?: Clock } = {}): TestPlatform {
  return useStarted(() => createTestPlatform(overrides, options));
}

/**
 * What `start` starts (a service over HTTP on a test platform, say) for the tests of one file
 * (or `describe` block): started before them, closed after them. Like `useTestPlatform`, the
 * returned object is filled in by the `beforeAll` hook: read its members inside tests and hooks only.
 */
export function useStarted<T extends { close(): Promise<unknown> }>(start: () => Promise<T>): T {
  const started = {} as T;
  hooks.beforeAll(async () => {
    Object.assign(started, await start());
  });
  hooks.afterAll(async () => {
    await started.close?.();
  });
  return started;
}

/** The outbox relay as the services run it, polling every `pollMs` (tests poll fast). */
export function startTestRelay(platform: Platform, pollMs = 50): Outbox {
  return startPlatformRelay(platform, { pollMs });
}
