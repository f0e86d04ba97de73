import { spawnSync } from 'node:child_process';
import path from 'node:path';

/** What the tests of the built all-in-one (`npm start`'s process) share. */

/** Creates an account with the operator CLI on the database at `databaseUrl` and returns its management key. */
export function createAccountKey(databaseUrl: string): string {
  const admin = spawnSync(
    process.execPath,
    [path.resolve(__dirname, '../services/management/dist/cli/admin.js'), 'accounts', 'create', '--plan', 'team'],
    { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' },
  );
  return (JSON.parse(admin.stdout) as { management_key: string }).management_key;
}

/** Calls the management API with a key and returns the status and JSON body. */
export function managementApi(url: string, key: string) {
  return async (method: string, apiPath: string, body?: unknown) => {
    const res = await fetch(`${url}${apiPath}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}
