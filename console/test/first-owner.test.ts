import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { emptyTestDatabaseUrl, uniqueEmail } from '@intake/shared/testing';
import { launchChromium } from './browser';
import { startStack } from './stack';

/**
 * A new installation's first owner, the way the README goes: an empty database, the operator CLI's `accounts create`
 * and `members add --role owner`, the invitation link opened in Chromium, a password chosen, signed in.
 */
jest.setTimeout(120_000);

const ADMIN = path.resolve(__dirname, '../../services/management/dist/cli/admin.js');
const PASSWORD = 'the first owner’s own passphrase';

/** Runs the operator CLI as its own process (detached, so `finally` can end its group) and parses its JSON. */
function operatorCli(args: string[], env: NodeJS.ProcessEnv, running: Set<ChildProcess>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ADMIN, ...args], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      running.delete(child);
      if (code === 0) resolve(JSON.parse(stdout));
      else reject(new Error(`admin ${args.join(' ')} exited ${code}: ${stderr}`));
    });
  });
}

describe('console: the first owner of a new installation', () => {
  it('joins through the CLI’s invitation link with a password, and signs in with it afterwards', async () => {
    const databaseUrl = await emptyTestDatabaseUrl('console_first_owner');
    const stack = await startStack({ DATABASE_URL: databaseUrl });
    const running = new Set<ChildProcess>();
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const env = { ...process.env, DATABASE_URL: databaseUrl, PUBLIC_BASE_URL: stack.url, LOG_LEVEL: 'silent' };
      const created = (await operatorCli(
        ['accounts', 'create', '--plan', 'free', '--name', 'Pixel & Pine'],
        env,
        running,
      )) as {
        account_id: string;
      };
      const maya = uniqueEmail('maya');
      const invited = (await operatorCli(
        ['members', 'add', '--account', created.account_id, '--email', maya, '--role', 'owner'],
        env,
        running,
      )) as { status: string; invitation_url: string };
      expect(invited.status).toBe('invited');
      expect(invited.invitation_url.startsWith(`${stack.url}/console/join#`)).toBe(true);
      // No one has joined: the sign-in page offers no password, and the join page must all the same.
      expect(await (await fetch(`${stack.url}/v1/sign-in-options`)).json()).toMatchObject({
        password: false,
        members: false,
      });

      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(invited.invitation_url);
      await page.getByText(`${maya} is invited to Pixel & Pine as owner.`).waitFor();
      const join = page.getByRole('form', { name: 'Join with a password' });
      await join.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await join.getByRole('button', { name: 'Join' }).click();
      await page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
      await page.getByText(`${maya} · owner`).waitFor();

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Email', { exact: true }).fill(maya);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByText(`${maya} · owner`).waitFor();
      const member = await stack.platform.db('members').where({ email: maya }).first('status', 'role');
      expect(member).toEqual({ status: 'active', role: 'owner' });
    } finally {
      for (const child of running) if (child.pid) process.kill(-child.pid, 'SIGKILL');
      await browser?.close();
      await stack.close();
    }
  });
});
