import { buildServiceApp } from '@intake/shared';
import { createTestPlatform, listen, type ConfigOverrides, type TestPlatform } from '@intake/shared/testing';
import { managementService } from '../src';

/** The management app over real HTTP on a real platform. */
export async function startManagement(overrides: ConfigOverrides = {}): Promise<{ platform: TestPlatform; url: string; close(): Promise<void> }> {
  const platform = await createTestPlatform(overrides);
  const server = await listen(buildServiceApp(managementService, platform).callback());
  return {
    platform,
    url: server.url,
    async close() {
      await server.close();
      await platform.close();
    },
  };
}

export function api(url: string, key?: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
}
