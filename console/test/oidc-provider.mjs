// A real OpenID provider for the single sign-on tests: `oidc-provider` (an ES module only, so it runs in a process
// of its own) on a loopback port. Its development login form takes any login, and the login is the person:
// `alice@acme.example` signs in with that e-mail, verified; `unverified:alice@acme.example` with it unverified.
// Prints `{"issuer": "..."}` on one line once it listens, then reads the client's redirect URI from a line on stdin
// (the app's address is known only once it runs with this issuer) and prints `ready`.
import http from 'node:http';
import process from 'node:process';
import readline from 'node:readline';
import Provider from 'oidc-provider';

const { OIDC_CLIENT_ID, OIDC_CLIENT_SECRET } = process.env;

function claimsOf(login) {
  const unverified = login.startsWith('unverified:');
  const email = unverified ? login.slice('unverified:'.length) : login;
  return { sub: login, email, email_verified: !unverified, name: `Person ${email.split('@')[0]}` };
}

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const redirectUri = (await lines.next()).value.trim();

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: OIDC_CLIENT_ID,
      client_secret: OIDC_CLIENT_SECRET,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
  ],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  cookies: { keys: ['a test-only cookie key'] },
  features: { devInteractions: { enabled: true } },
  async findAccount(_ctx, id) {
    return { accountId: id, claims: async () => claimsOf(id) };
  },
  // A first-party client: no consent screen, the scopes asked for are granted.
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid email profile');
    grant.addOIDCClaims(['email', 'email_verified', 'name']);
    await grant.save();
    return grant;
  },
});
server.on('request', provider.callback());
process.stdout.write('ready\n');
