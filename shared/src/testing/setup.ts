import type { OutboxRelay } from '../outbox';
import type { Platform } from '../platform';
import { startPlatformRelay } from '../service';
import type { Clock } from '../time';
import { createTestPlatform, type ConfigOverrides, type TestPlatform } from './index';

/** Jest's hooks, as globals (the package is compiled without Jest's types). */
const hooks = globalThis as unknown as {
  beforeAll(fn: () => Promise<unknown>, timeoutMs?: number): void;
  afterAll(fn: () => Promise<unknown>, timeoutMs?: number): void;
};

/**
 * A real test platform for the tests of one file (or `describe` block): created before them,
 * closed after them. The returned object is filled in by the `beforeAll` hook, so read its
 * members inside tests and hooks only.
 */
export function useTestPlatform(overrides: ConfigOverrides = {}, options: { clock?: Clock } = {}): TestPlatform {
  const platform = {} as TestPlatform;
  hooks.beforeAll(async () => {
    Object.assign(platform, await createTestPlatform(overrides, options));
  });
  hooks.afterAll(async () => {
    await platform.close?.();
  });
  return platform;
}

/** The outbox relay as the services run it, polling every `pollMs` (tests poll fast). */
export function startTestRelay(platform: Platform, pollMs = 50): OutboxRelay {
  return startPlatformRelay(platform, { pollMs });
}
