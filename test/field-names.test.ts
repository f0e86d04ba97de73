import { buildServiceApp, type Worker } from '@intake/shared/runtime';
import { createTestPlatform, eventually, factories, listen, startTestRelay, useStarted } from '@intake/shared/testing';
import { createIngestService } from '@intake/ingest';
import { deliveryService } from '@intake/delivery';
import { managementService } from '@intake/management';

/**
 * Field names that are also names of Object.prototype's members are data like any other: posted in each body type,
 * they are stored, sent to the webhook and read back from the API as sent and in posted order, and pollute nothing.
 */
const NAMES = ['constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'name'];

/** Ingest, management, the delivery workers and a relay on one platform, and a webhook receiver recording bodies. */
function useWholePath() {
  return useStarted(async () => {
    const platform = await createTestPlatform();
    const ingest = await listen(
      buildServiceApp(createIngestService({ publishAfterCommit: true }), platform).callback(),
    );
    const management = await listen(buildServiceApp(managementService, platform).callback());
    const workers: Worker[] = [...(await deliveryService.startWorkers(platform)), startTestRelay(platform, 100)];
    const bodies: string[] = [];
    const receiver = await listen((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        bodies.push(body);
        res.end('ok');
      });
    });
    const account = await factories.account(platform.db);
    const form = await factories.form(platform.db, account.id);
    await factories.webhook(platform, { accountId: account.id, formId: form.id, url: `${receiver.url}/hook` });
    return {
      platform,
      bodies,
      form,
      ingestUrl: `${ingest.url}/v1/f/${form.slug}`,
      api: (path: string) =>
        fetch(`${management.url}${path}`, { headers: { authorization: `Bearer ${account.managementKey}` } }),
      async close() {
        await Promise.allSettled(workers.map((w) => w.stop()));
        await Promise.all([ingest.close(), management.close(), receiver.close()]);
        await platform.close();
      },
    };
  });
}

function multipart(fields: [string, string][]): { body: string; type: string } {
  const parts = fields.map(([n, v]) => `--b\r\ncontent-disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`);
  return { body: `${parts.join('')}--b--\r\n`, type: 'multipart/form-data; boundary=b' };
}

describe('field names that are Object.prototype’s', () => {
  const ctx = useWholePath();
  const fields = NAMES.map((n, i): [string, string] => [n, `value ${i}`]);

  it.each([
    ['urlencoded', { body: new URLSearchParams(fields).toString(), type: 'application/x-www-form-urlencoded' }],
    ['JSON', { body: `{${fields.map(([n, v]) => `"${n}":"${v}"`).join(',')}}`, type: 'application/json' }],
    ['multipart', multipart(fields)],
  ])('in a %s post are stored, sent and read back as data, in posted order', async (_kind, post) => {
    const res = await fetch(ctx.ingestUrl, { method: 'POST', headers: { 'content-type': post.type }, body: post.body });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const expected = JSON.stringify(Object.fromEntries(fields));

    const row = await ctx.platform.db('submissions').where({ id }).first(ctx.platform.db.raw('payload::text AS text'));
    expect(JSON.stringify(JSON.parse(row.text))).toBe(expected);

    const read = await ctx.api(`/v1/submissions/${id}`);
    expect(read.status).toBe(200);
    expect(JSON.stringify(((await read.json()) as { payload: unknown }).payload)).toBe(expected);

    const sent = await eventually(() => ctx.bodies.find((b) => b.includes(id)), { message: 'the webhook' });
    expect(JSON.stringify((JSON.parse(sent) as { data: { payload: unknown } }).data.payload)).toBe(expected);
  });

  it('a JSON value under __proto__ is stored as its JSON text and pollutes no prototype', async () => {
    const res = await fetch(ctx.ingestUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}',
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const read = (await (await ctx.api(`/v1/submissions/${id}`)).json()) as { payload: Record<string, string> };
    expect(Object.entries(read.payload)).toEqual([
      ['__proto__', '{"polluted":"yes"}'],
      ['constructor', '{"prototype":{"polluted":"yes"}}'],
    ]);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
