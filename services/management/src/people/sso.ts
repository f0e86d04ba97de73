import { timingSafeEqual } from 'node:crypto';
import type { Configuration } from 'openid-client' with { 'resolution-mode': 'import' };
import type { Config } from '@intake/shared/base';
import type { Platform } from '@intake/shared/runtime';
import { joinIdentity, signInIdentity, SsoRefusal, type Identity, type SignedInBySso } from './sso-members';
import type { Client } from './sign-in';

type OpenIdClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });

/**
 * Single sign-on over OpenID Connect: the authorization code flow with PKCE (S256), `state` and `nonce`, by
 * `openid-client`. What the callback needs back (state, nonce, code verifier, an invitation) travels in a short-lived
 * cookie sealed with SECRETS_KEY, so nothing is stored per attempt; see docs/decisions.md (People: SSO).
 */
export const SSO_PATHS = { start: '/console/auth/login', callback: '/console/auth/callback' } as const;
export const SSO_COOKIE = 'intake_sso';
/** A sign-in must come back from the identity provider within this long. */
export const SSO_TTL_MS = 10 * 60_000;
export { SsoRefusal };
const SCOPE = 'openid email profile';
/** Seconds discovery and the token exchange may take before the provider counts as down. */
const PROVIDER_TIMEOUT_S = 10;

export const ssoConfigured = (config: Config): boolean => Boolean(config.OIDC_ISSUER && config.OIDC_CLIENT_ID);
export const ssoRedirectUri = (config: Config): string => `${config.PUBLIC_BASE_URL}${SSO_PATHS.callback}`;

// The library is an ES module only: loaded on first use (a CommonJS build cannot `require` it under Node16 typing).
let library: Promise<OpenIdClient> | undefined;
const openIdClient = (): Promise<OpenIdClient> => (library ??= import('openid-client'));

/** Discovered provider metadata, by issuer and client: fetched on first use, forgotten when it failed. */
const discovered = new Map<string, Promise<Configuration>>();

async function discover(config: Config): Promise<Configuration> {
  const oidc = await openIdClient();
  const issuer = new URL(config.OIDC_ISSUER as string);
  return oidc.discovery(
    issuer,
    config.OIDC_CLIENT_ID as string,
    config.OIDC_CLIENT_SECRET,
    // Without a secret the client is a public one (PKCE alone), as Keycloak and Authentik allow.
    config.OIDC_CLIENT_SECRET ? undefined : oidc.None(),
    {
      timeout: PROVIDER_TIMEOUT_S,
      // An http issuer is the operator's explicit choice (a provider on the same private network).
      execute: issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
    },
  );
}

/** The provider's configuration, discovered once; a provider that is down is a 502 page, and is asked again next time. */
export async function providerConfiguration(config: Config, logger: Platform['logger']): Promise<Configuration> {
  const key = JSON.stringify([config.OIDC_ISSUER, config.OIDC_CLIENT_ID, config.OIDC_CLIENT_SECRET]);
  let found = discovered.get(key);
  if (!found) {
    found = discover(config);
    discovered.set(key, found);
    found.catch(() => discovered.delete(key));
  }
  try {
    return await found;
  } catch (err) {
    logger.warn({ err, issuer: config.OIDC_ISSUER }, 'OpenID Connect discovery failed');
    throw new SsoRefusal(
      502,
      'The sign-in service cannot be reached',
      'The identity provider did not answer or answered something unexpected. Try again in a moment, or sign in another way.',
    );
  }
}

/** What the callback needs, sealed in the cookie. */
interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  invitation?: string;
  expires: number;
}

/** The provider's authorization URL for a new sign-in, and the sealed cookie value that completes it. */
export async function startSso(
  platform: Pick<Platform, 'config' | 'logger' | 'secrets' | 'clock'>,
  invitation?: string,
): Promise<{ location: string; sealed: string }> {
  const oidc = await openIdClient();
  const provider = await providerConfiguration(platform.config, platform.logger);
  const flow: Flow = {
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    verifier: oidc.randomPKCECodeVerifier(),
    ...(invitation ? { invitation } : {}),
    expires: platform.clock.now().getTime() + SSO_TTL_MS,
  };
  const url = oidc.buildAuthorizationUrl(provider, {
    redirect_uri: ssoRedirectUri(platform.config),
    scope: SCOPE,
    code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  });
  return { location: url.href, sealed: platform.secrets.seal(JSON.stringify(flow)) };
}

const notStartedHere = () =>
  new SsoRefusal(
    400,
    'This sign-in cannot be completed',
    'It was not started in this browser, has expired (after 10 minutes), or was already used. Start again from the sign-in page.',
  );

function openFlow(platform: Pick<Platform, 'secrets' | 'clock'>, sealed: string | undefined): Flow {
  if (!sealed || sealed.length > 4000) throw notStartedHere();
  let flow: Flow;
  try {
    flow = JSON.parse(platform.secrets.open(sealed)) as Flow;
  } catch {
    throw notStartedHere();
  }
  if (typeof flow.expires !== 'number' || flow.expires <= platform.clock.now().getTime()) throw notStartedHere();
  return flow;
}

const sameText = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * The callback: checks `state` against the cookie, exchanges the code (openid-client checks PKCE, the ID token's
 * signature, issuer, audience and `nonce`), reads the e-mail, and signs the member in (or joins them).
 */
export async function finishSso(props: {
  platform: Platform;
  query: URLSearchParams;
  sealed: string | undefined;
  client: Client;
}): Promise<SignedInBySso> {
  const { platform, query } = props;
  const flow = openFlow(platform, props.sealed);
  const state = query.get('state');
  if (!state || !sameText(state, flow.state)) throw notStartedHere();
  const error = query.get('error');
  if (error !== null) {
    // The provider's words are not shown: only a code of the standard's shape, as text.
    const code = /^[a-z_]{1,40}$/.test(error) ? ` (${error})` : '';
    throw new SsoRefusal(
      403,
      'The identity provider did not sign you in',
      `It refused or cancelled the sign-in${code}.`,
    );
  }
  const identity = await exchange(platform, query, flow);
  checkIdentity(platform.config, identity);
  const now = platform.clock.now();
  const people = { db: platform.db, config: platform.config, client: props.client, now };
  return flow.invitation ? joinIdentity(people, identity, flow.invitation) : signInIdentity(people, identity);
}

async function exchange(platform: Platform, query: URLSearchParams, flow: Flow): Promise<Identity> {
  const oidc = await openIdClient();
  const provider = await providerConfiguration(platform.config, platform.logger);
  // The redirect URI as registered (PUBLIC_BASE_URL), whatever address the request came in by.
  const current = new URL(ssoRedirectUri(platform.config));
  current.search = query.toString();
  try {
    const tokens = await oidc.authorizationCodeGrant(provider, current, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new Error('no ID token');
    // Most providers put the e-mail in the ID token; others (oidc-provider by default) only at userinfo.
    const info =
      typeof claims['email'] === 'string'
        ? claims
        : await oidc.fetchUserInfo(provider, tokens.access_token, claims.sub);
    return identityOf({ ...claims, ...info });
  } catch (err) {
    platform.logger.info({ err }, 'an OpenID Connect sign-in was refused at the code exchange');
    throw new SsoRefusal(
      400,
      'This sign-in cannot be completed',
      'The identity provider’s answer did not check out: the sign-in expired, was already used, or does not belong to this browser. Start again from the sign-in page.',
    );
  }
}

const truthy = (v: unknown) => v === true || v === 'true';

function identityOf(claims: Record<string, unknown>): Identity {
  const email = typeof claims['email'] === 'string' ? claims['email'].trim().toLowerCase() : '';
  const name = typeof claims['name'] === 'string' ? claims['name'].slice(0, 200) : null;
  // Entra ID sends no email_verified; its optional claim xms_edov says the domain owner verified the address.
  return { email, name, verified: truthy(claims['email_verified']) || truthy(claims['xms_edov']) };
}

/** The identity must have a verified e-mail, in OIDC_ALLOWED_DOMAINS when that is set. */
function checkIdentity(config: Config, identity: Identity): void {
  if (!/^[^@\s]+@[^@\s]+$/.test(identity.email) || identity.email.length > 320)
    throw new SsoRefusal(403, 'No e-mail address', 'The identity provider did not tell us your e-mail address.');
  if (!identity.verified)
    throw new SsoRefusal(
      403,
      'E-mail address not verified',
      'The identity provider does not vouch for your e-mail address (email_verified is not true). Verify it there, then sign in again.',
    );
  const domain = identity.email.split('@')[1] as string;
  if (!allowedDomains(config).has(domain) && allowedDomains(config).size > 0)
    throw new SsoRefusal(
      403,
      'E-mail domain not allowed',
      `Addresses at ${domain} cannot sign in here with single sign-on.`,
    );
}

export function allowedDomains(config: Config): Set<string> {
  return new Set(
    (config.OIDC_ALLOWED_DOMAINS ?? '')
      .split(',')
      .map((d) => d.trim().toLowerCase().replace(/^@/, ''))
      .filter(Boolean),
  );
}
