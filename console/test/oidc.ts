import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

/** The client the OpenID provider knows the console by (the tests' OIDC_CLIENT_ID and OIDC_CLIENT_SECRET). */
export const CLIENT = { id: 'intake-console', secret: 'a test-only client secret of some length' };

/** The provider in its own process (it is an ES module only); the redirect URI is told once the stack listens. */
export async function startProvider() {
  const child = spawn(process.execPath, [path.join(__dirname, 'oidc-provider.mjs')], {
    env: { ...process.env, OIDC_CLIENT_ID: CLIENT.id, OIDC_CLIENT_SECRET: CLIENT.secret },
    stdio: ['pipe', 'pipe', 'ignore'],
    detached: true,
  });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error('the OpenID provider did not start');
  const { issuer } = JSON.parse(first.value as string) as { issuer: string };
  return {
    issuer,
    async register(redirectUri: string) {
      child.stdin.write(`${redirectUri}\n`);
      if ((await lines.next()).value !== 'ready') throw new Error('the OpenID provider did not take the client');
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A cookie jar good enough for one host's flow: names to values. */
export class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair as string).indexOf('=');
      this.cookies.set((pair as string).slice(0, eq).trim(), (pair as string).slice(eq + 1).trim());
    }
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Starts a sign-in at the app, logs in at the provider's form as `login`, and stops at the callback: its URL and
 * the app's flow cookie, so a test can complete it as it is, or tampered with.
 */
export async function throughProvider(
  appUrl: string,
  login: string,
  start?: RequestInit,
): Promise<{ callback: URL; sso: string }> {
  const app = new Jar();
  const first = await fetch(`${appUrl}/console/auth/login`, { redirect: 'manual', ...start });
  app.take(first);
  const html = start?.method === 'POST' ? await first.text() : '';
  const refresh = /url=([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
  let url = new URL(first.headers.get('location') ?? refresh ?? 'about:blank');
  const provider = new Jar();
  for (let hops = 0; hops < 10; hops++) {
    if (url.href.startsWith(`${appUrl}/console/auth/callback`))
      return { callback: url, sso: app.get('intake_sso') ?? '' };
    let res = await fetch(url, { redirect: 'manual', headers: { cookie: provider.header() } });
    provider.take(res);
    if (res.status === 200) {
      const action = /action="([^"]+)"/.exec(await res.text())?.[1] as string;
      res = await fetch(new URL(action, url), {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: provider.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString(),
      });
      provider.take(res);
    }
    url = new URL(res.headers.get('location') as string, url);
  }
  throw new Error(`the provider never sent us back (last at ${url.href})`);
}

/** The callback, as the browser would send it (with the flow cookie). */
export async function callback(
  url: URL,
  sso: string,
): Promise<{ res: Response; html: string; session: string | undefined }> {
  const res = await fetch(url, { redirect: 'manual', headers: { cookie: `intake_sso=${sso}` } });
  const session = res.headers
    .getSetCookie()
    .map((l) => /^intake_session=([^;]+)/.exec(l)?.[1])
    .find(Boolean);
  return { res, html: await res.text(), session };
}
