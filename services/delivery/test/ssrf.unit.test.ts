import { request } from 'undici';
import { checkWebhookUrl, guardedLookup, isBlockedAddress, TARGET_REFUSAL, urlRefusal } from '@intake/shared/webhooks';
import { createWebhookAgent, sendWebhook } from '../src/send/attempt';
import { receiver } from './helpers';

const PRIVATE = [
  '127.0.0.1',
  '127.1.2.3',
  '10.0.0.1',
  '172.16.5.4',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '224.0.0.1',
  '255.255.255.255',
  '::1',
  '::',
  'fd00::1',
  'fc12::5',
  'fe80::1',
  'ff02::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:a9fe:a9fe',
  '0:0:0:0:0:ffff:10.0.0.1',
  '64:ff9b::10.0.0.1',
  '[::1]',
  '2002:a00:1::1',
  '2001:0:4136:e378:8000:63bf:f5ff:fffe',
  '192.88.99.1',
];
const PUBLIC = [
  '93.184.216.34',
  '1.1.1.1',
  '8.8.8.8',
  '2606:4700:4700::1111',
  '64:ff9b::808:808', // the well-known NAT64 prefix carrying a public IPv4 address
  '172.32.0.1',
  '100.128.0.1',
];

const REFUSED_AT_SAVE = [
  'http://example.com/hook',
  'https://127.0.0.1/hook',
  'https://[::1]/',
  'https://[::ffff:127.0.0.1]/',
  'https://169.254.169.254/latest/meta-data',
  'https://10.1.2.3:8443/',
  'https://[fd00::1]/',
  'https://100.64.1.1/',
  'https://localhost/',
  'https://api.localhost/',
  'https://intranet/',
  'ftp://example.com/',
  'not a url',
  'https://user:pw@example.com/',
];

describe('SSRF guard', () => {
  it.each(PRIVATE)('refuses %s', (address) => expect(isBlockedAddress(address)).toBe(true));
  it.each(PUBLIC)('allows %s', (address) => expect(isBlockedAddress(address)).toBe(false));

  // At save time: http, private IP literals (v4, v6, IPv4-mapped), localhost names, names resolving to loopback.
  it.each(REFUSED_AT_SAVE)('refuses at save time %s', async (url) =>
    expect(await checkWebhookUrl(url, false)).toEqual(expect.any(String)),
  );

  it('allows at save time a public https URL, a private one where private networks are allowed', async () => {
    expect(await checkWebhookUrl('https://93.184.216.34/hook', false)).toBeUndefined();
    expect(await checkWebhookUrl('http://127.0.0.1:3000/hook', true)).toBeUndefined();
    expect(urlRefusal('https://hooks.example.com/x', false)).toBeUndefined();
  });

  it('the connect-time lookup drops private addresses and honours options.all', async () => {
    const lookup = (host: string, all: boolean) =>
      new Promise<{ err: Error | null; result: unknown }>((resolve) =>
        guardedLookup(host, { all }, (err, result) => resolve({ err, result })),
      );
    for (const all of [true, false]) {
      const { err } = await lookup('localhost', all);
      expect(err?.name).toBe('BlockedTargetError');
    }
  });

  it('refuses at connect time a name that resolves to loopback, even when the URL check is bypassed (DNS rebinding)', async () => {
    const target = await receiver();
    const agent = createWebhookAgent({ allowPrivateNetworks: false, timeoutMs: 2000 });
    try {
      const port = new URL(target.url).port;
      await expect(
        request(`http://localhost:${port}/`, { method: 'POST', body: '{}', dispatcher: agent }),
      ).rejects.toMatchObject({ name: 'BlockedTargetError' });
      expect(target.requests).toHaveLength(0);
    } finally {
      await agent.close();
      await target.close();
    }
  });

  it('sendWebhook refuses literal private targets and reports it as a failed attempt without connecting', async () => {
    const target = await receiver();
    const agent = createWebhookAgent({ allowPrivateNetworks: false, timeoutMs: 2000 });
    try {
      const port = new URL(target.url).port;
      for (const url of [
        `https://127.0.0.1:${port}/`,
        `https://[::ffff:127.0.0.1]:${port}/`,
        target.url,
        `https://localhost:${port}/`,
      ]) {
        const result = await sendWebhook({
          agent,
          url,
          allowPrivateNetworks: false,
          timeoutMs: 2000,
          type: 'webhook.test',
          deliveryId: 'whd_x',
          data: {},
          attempt: 1,
          secret: 'whsec_AAAA',
          now: new Date(),
        });
        expect({ url, ok: result.ok, statusCode: result.statusCode, error: result.error }).toEqual({
          url,
          ok: false,
          statusCode: null,
          error: expect.stringMatching(/^refused: /),
        });
      }
      expect(target.requests).toHaveLength(0);
    } finally {
      await agent.close();
      await target.close();
    }
  });
});

/**
 * With WEBHOOK_ALLOW_PRIVATE_NETWORKS a receiver may be inside our network, and the delivery log (read by every
 * viewer) would read it back: an answer that may have come from a private address keeps its status, never its body.
 */
describe('private networks allowed: what the log keeps of a private receiver', () => {
  it('keeps no answer body from a loopback receiver, named by address or by a name, whatever the status', async () => {
    const target = await receiver((_req, n, res) => {
      res.statusCode = n % 2 ? 200 : 500;
      res.end('{"server_id":"NBJY-internal","version":"2.9.10"}');
    });
    const agent = createWebhookAgent({ allowPrivateNetworks: true, timeoutMs: 2000 });
    const port = new URL(target.url).port;
    try {
      const results = [];
      for (const url of [target.url, `http://localhost:${port}/varz`, `${target.url}/again`, target.url])
        results.push(
          await sendWebhook({
            agent,
            url,
            allowPrivateNetworks: true,
            timeoutMs: 2000,
            type: 'webhook.test',
            deliveryId: 'whd_x',
            data: {},
            attempt: 1,
            secret: 'whsec_AAAA',
            now: new Date(),
          }),
        );
      expect(target.requests).toHaveLength(4);
      expect(results.map((r) => [r.statusCode, r.error, r.responseBody])).toEqual([
        [200, null, null],
        [500, 'receiver answered 500', null],
        [200, null, null],
        [500, 'receiver answered 500', null],
      ]);
      expect(agent.answersOnlyFromPublicAddresses(target.url)).toBe(false);
      // An origin it never reached counts as private too.
      expect(agent.answersOnlyFromPublicAddresses('https://hooks.example.com/x')).toBe(false);
    } finally {
      await agent.close();
      await target.close();
    }
  });
});

/** A refusal tells that the target is not allowed, never what a name resolved to or whether it exists. */
describe('SSRF guard: what a refusal tells', () => {
  it('the connect-time lookup fails a private name and a missing one alike, never naming an address', async () => {
    const lookup = (host: string) =>
      new Promise<Error | null>((resolve) => guardedLookup(host, { all: false }, (err) => resolve(err)));
    const [internal, missing] = [await lookup('localhost'), await lookup('no-such-host.invalid')];
    expect(internal?.message).toBe('localhost has no public address');
    expect(missing?.message).toBe('no-such-host.invalid has no public address');
    expect([internal?.name, missing?.name]).toEqual(['BlockedTargetError', 'BlockedTargetError']);
  });

  it('gives at save time one answer for a name resolving inside our network, a missing name and any refused URL', async () => {
    const resolvingTo = (address: string) => async () => [{ address, family: 4 }];
    const answers = [
      await checkWebhookUrl('https://intranet.corp.example/hook', false, { lookup: resolvingTo('10.0.0.5') }),
      await checkWebhookUrl('https://meta.corp.example/hook', false, { lookup: resolvingTo('169.254.169.254') }),
      await checkWebhookUrl('https://no-such-host.invalid/hook', false),
      await checkWebhookUrl('https://10.0.0.5/hook', false),
      await checkWebhookUrl('http://example.com/hook', false),
      await checkWebhookUrl('https://intranet/hook', false),
    ];
    expect(new Set(answers)).toEqual(new Set(['must be an https URL of a host with a public address']));
    expect(
      await checkWebhookUrl('https://hooks.corp.example/x', false, { lookup: resolvingTo('93.184.216.34') }),
    ).toBeUndefined();
  });
});

/**
 * Every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries (and multicast), by its first address and
 * one inside it: refused as an address, and at save time when a name resolves to it (names only in URLs).
 */
const REGISTRIES: [string, string[]][] = [
  ['0.0.0.0/8 this network', ['0.0.0.0', '0.1.2.3']],
  ['10.0.0.0/8 private', ['10.0.0.0', '10.200.1.1']],
  ['100.64.0.0/10 shared address space', ['100.64.0.0', '100.127.255.254']],
  ['127.0.0.0/8 loopback', ['127.0.0.0', '127.255.0.1']],
  ['169.254.0.0/16 link-local', ['169.254.0.0', '169.254.169.254']],
  ['172.16.0.0/12 private', ['172.16.0.0', '172.31.255.1']],
  ['192.0.0.0/24 IETF protocol assignments', ['192.0.0.0', '192.0.0.9', '192.0.0.10', '192.0.0.170']],
  ['192.0.2.0/24 TEST-NET-1', ['192.0.2.0', '192.0.2.200']],
  ['192.31.196.0/24 AS112-v4', ['192.31.196.0', '192.31.196.1']],
  ['192.52.193.0/24 AMT', ['192.52.193.0', '192.52.193.7']],
  ['192.88.99.0/24 6to4 relay anycast', ['192.88.99.0', '192.88.99.1']],
  ['192.168.0.0/16 private', ['192.168.0.0', '192.168.77.1']],
  ['192.175.48.0/24 AS112 direct delegation', ['192.175.48.0', '192.175.48.6']],
  ['198.18.0.0/15 benchmarking', ['198.18.0.0', '198.19.255.1']],
  ['198.51.100.0/24 TEST-NET-2', ['198.51.100.0', '198.51.100.9']],
  ['203.0.113.0/24 TEST-NET-3', ['203.0.113.0', '203.0.113.9']],
  ['240.0.0.0/4 reserved', ['240.0.0.0', '250.1.2.3']],
  ['255.255.255.255/32 limited broadcast', ['255.255.255.255']],
  ['224.0.0.0/4 multicast', ['224.0.0.0', '239.1.2.3']],
  ['::1/128 loopback', ['::1']],
  ['::/128 unspecified', ['::']],
  ['::/96 IPv4-compatible (deprecated)', ['::808:808']],
  ['::ffff:0:0/96 IPv4-mapped', ['::ffff:0:0', '::ffff:8.8.8.8', '::ffff:10.0.0.1']],
  ['::ffff:0:0:0/96 IPv4-translated (SIIT)', ['::ffff:0:0:0', '::ffff:0:808:808', '::ffff:0:a00:1']],
  ['64:ff9b::/96 NAT64 carrying a special address', ['64:ff9b::a00:1', '64:ff9b::7f00:1']],
  ['64:ff9b:1::/48 local-use translation', ['64:ff9b:1::', '64:ff9b:1::808:808', '64:ff9b:1:ffff::1']],
  ['100::/64 discard-only', ['100::', '100::1']],
  ['100:0:0:1::/64 dummy prefix', ['100:0:0:1::', '100:0:0:1::9']],
  ['2001::/23 IETF protocol assignments', ['2001::', '2001:1::1', '2001:1::2', '2001:1::3', '2001:1ff::1']],
  ['2001::/32 Teredo', ['2001:0:4136:e378:8000:63bf:f5ff:fffe']],
  ['2001:2::/48 benchmarking', ['2001:2::1']],
  ['2001:3::/32 AMT', ['2001:3::1']],
  ['2001:4:112::/48 AS112-v6', ['2001:4:112::1']],
  ['2001:20::/28 ORCHIDv2', ['2001:20::1', '2001:2f::1']],
  ['2001:30::/28 drone remote ID', ['2001:30::1']],
  ['2001:db8::/32 documentation', ['2001:db8::', '2001:db8:ffff::1']],
  ['2002::/16 6to4', ['2002::', '2002:808:808::1']],
  ['2620:4f:8000::/48 AS112 direct delegation', ['2620:4f:8000::', '2620:4f:8000::1']],
  ['3fff::/20 documentation', ['3fff::', '3fff:fff::1']],
  ['5f00::/16 segment routing SIDs', ['5f00::', '5f00:1::1']],
  ['fc00::/7 unique-local', ['fc00::', 'fdff::1']],
  ['fe80::/10 link-local', ['fe80::', 'febf::1']],
  ['ff00::/8 multicast', ['ff00::', 'ff02::1']],
];

describe('SSRF guard: the IANA special-purpose registries', () => {
  it.each(REGISTRIES)('refuses %s', async (_entry, addresses) => {
    for (const address of addresses) {
      expect({ address, blocked: isBlockedAddress(address) }).toEqual({ address, blocked: true });
      const family = address.includes(':') ? 6 : 4;
      const lookup = async () => [{ address, family }];
      expect({ address, refusal: await checkWebhookUrl('https://hook.example/x', false, { lookup }) }).toEqual({
        address,
        refusal: TARGET_REFUSAL,
      });
    }
  });

  it('allows the public neighbours of those ranges', () => {
    for (const address of ['100.128.0.1', '172.32.0.1', '192.0.1.1', '198.20.0.1', '2001:200::1', '2003::1'])
      expect({ address, blocked: isBlockedAddress(address) }).toEqual({ address, blocked: false });
  });
});
