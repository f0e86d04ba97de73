import { request } from 'undici';
import {
  checkWebhookUrl,
  createWebhookAgent,
  guardedLookup,
  isBlockedAddress,
  sendWebhook,
  urlRefusal,
} from '@intake/shared';
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
  '::ffff:8.8.8.8',
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
