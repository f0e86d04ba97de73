import { buildServiceApp } from '@intake/shared';
import {
  createTestPlatform,
  expectMatchesOpenApi,
  factories,
  listen,
  type ConfigOverrides,
  type TestPlatform,
} from '@intake/shared/testing';
import { managementService } from '../src';

/** The management app over real HTTP on a real platform. */
export async function startManagement(
  overrides: ConfigOverrides = {},
): Promise<{ platform: TestPlatform; url: string; close(): Promise<void> }> {
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

/**
 * Calls the API with an optional key. Every response is checked against the served OpenAPI
 * document (status documented, content type listed, JSON body fits the schema): pass
 * `{ contract: false }` only for a response that is deliberately outside it.
 */
export function api(url: string, key?: string, options: { contract?: boolean } = {}) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    const contentType = res.headers.get('content-type');
    const parsed =
      text && /json/.test(contentType ?? '') && !/ndjson/.test(contentType ?? '')
        ? JSON.parse(text)
        : text || undefined;
    if (options.contract !== false)
      await expectMatchesOpenApi(url, { method, path, status: res.status, contentType, body: parsed });
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

type SubmissionProps = Omit<Parameters<typeof factories.submission>[1], 'accountId' | 'formId'>;

/** A fresh account with one form, a caller holding its management key, and `submit` storing a post to the form. */
export async function ownerWithForm(ctx: { platform: TestPlatform; url: string }) {
  const account = await factories.account(ctx.platform.db);
  const form = await factories.form(ctx.platform.db, account.id);
  const submit = (props: SubmissionProps = {}) =>
    factories.submission(ctx.platform, { accountId: account.id, formId: form.id, ...props });
  return { account, form, call: api(ctx.url, account.managementKey), submit };
}
