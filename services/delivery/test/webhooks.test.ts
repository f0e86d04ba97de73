import { Webhook } from 'standardwebhooks';
import { eventually, factories, useStarted } from '@intake/shared/testing';
import { SUBJECTS } from '@intake/shared/contracts';
import { CONSUMERS } from '../src';
import { accountWithForm, receiver, startDelivery, submit, verifyWithOctokit } from './helpers';

const ctx = useStarted(() => startDelivery());

/** A receiver, and a fresh account's form with a webhook to it (at `path`); the receiver is closed once `use` is done. */
async function withHookedForm(
  use: (f: {
    target: Awaited<ReturnType<typeof receiver>>;
    accountId: string;
    formId: string;
    hook: Awaited<ReturnType<typeof factories.webhook>>;
  }) => Promise<void>,
  path = '',
) {
  const target = await receiver();
  try {
    const { accountId, formId } = await accountWithForm(ctx.platform);
    const hook = await factories.webhook(ctx.platform, { accountId, formId, url: `${target.url}${path}` });
    await use({ target, accountId, formId, hook });
  } finally {
    await target.close();
  }
}

describe('webhook delivery of submission.created: the signed request', () => {
  it('POSTs the signed envelope with exactly the documented headers, verified by libraries we did not write', async () => {
    await withHookedForm(async ({ target, accountId, formId, hook }) => {
      const event = await submit(ctx.platform, {
        accountId,
        formId,
        payload: { name: 'Ada Lovelace', note: 'ünïcødé ✓ "quotes"' },
      });
      const [req] = await eventually(() => target.requests.length === 1 && target.requests);
      const request = req!;
      expect(request.url).toBe('/hooks?x=1');
      const envelope = JSON.parse(request.body);
      expect(envelope).toEqual({
        type: 'submission.created',
        id: expect.stringMatching(/^whd_[0-9a-z]{26}$/),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data: {
          submission_id: event.submission_id,
          form_id: formId,
          project: null, // the account's default project
          payload: { name: 'Ada Lovelace', note: 'ünïcødé ✓ "quotes"' },
          files: [],
        },
      });
      expect(request.headers).toMatchObject({
        'content-type': 'application/json',
        'user-agent': 'Service-Webhooks/1',
        'x-service-event': 'submission.created',
        'x-service-delivery': envelope.id,
        'x-service-attempt': '1',
        'webhook-id': envelope.id,
        'webhook-timestamp': String(Math.floor(Date.parse(envelope.created_at) / 1000)),
      });
      expect(request.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(await verifyWithOctokit(hook.secret, request.body, request.headers['x-service-signature'] as string)).toBe(
        true,
      );
      expect(
        await verifyWithOctokit(hook.secret, request.body + ' ', request.headers['x-service-signature'] as string),
      ).toBe(false);
      expect(
        await verifyWithOctokit('whsec_other', request.body, request.headers['x-service-signature'] as string),
      ).toBe(false);
      const verified = new Webhook(hook.secret).verify(request.body, request.headers as Record<string, string>);
      expect(verified).toEqual(envelope);
      expect(() =>
        new Webhook(hook.secret).verify(request.body.replace('Ada', 'Bob'), request.headers as Record<string, string>),
      ).toThrow();

      const delivery = await eventually(() =>
        ctx.platform.db('deliveries').where({ id: envelope.id, status: 'succeeded' }).first(),
      );
      expect(delivery).toMatchObject({
        webhook_id: hook.id,
        submission_id: event.submission_id,
        attempt_count: 1,
        last_status_code: 200,
      });
      const attempts = await ctx.platform.db('delivery_attempts').where({ delivery_id: envelope.id });
      expect(attempts).toEqual([
        expect.objectContaining({
          attempt: 1,
          trigger: 'schedule',
          status_code: 200,
          error: null,
          // A receiver on loopback (private networks allowed): its answer's body is not kept.
          response_body: null,
        }),
      ]);
    }, '/hooks?x=1');
  });
});

describe('webhook delivery of submission.created: which webhooks and fields are sent', () => {
  it('sends the fields of a submission whose event went without them (too large for a message), read from the submission', async () => {
    await withHookedForm(async ({ target, accountId, formId }) => {
      const event = await submit(ctx.platform, {
        accountId,
        formId,
        payload: { name: 'Ada', essay: 'long text' },
        omitPayload: true,
      });
      expect(event.payload).toEqual({});
      const [req] = await eventually(() => target.requests.length === 1 && target.requests);
      expect(JSON.parse(req!.body).data).toEqual({
        submission_id: event.submission_id,
        form_id: formId,
        project: null,
        payload: { name: 'Ada', essay: 'long text' },
        files: [],
      });
    }, '/hook');
  });

  it('creates one delivery per enabled webhook only, and a redelivered event creates no second one', async () => {
    const a = await receiver();
    const b = await receiver();
    const off = await receiver();
    try {
      const { accountId, formId } = await accountWithForm(ctx.platform);
      const hookA = await factories.webhook(ctx.platform, { accountId, formId, url: a.url });
      const hookB = await factories.webhook(ctx.platform, { accountId, formId, url: b.url });
      await factories.webhook(ctx.platform, { accountId, formId, url: off.url, enabled: false });
      const event = await submit(ctx.platform, { accountId, formId });
      await eventually(() => a.requests.length === 1 && b.requests.length === 1);
      // The same event again, past JetStream's dedup window (a fresh msgID): Postgres must still refuse a second delivery.
      const { nats } = ctx.platform;
      await nats.js.publish(nats.names.subject(SUBJECTS.submissionCreated), JSON.stringify(event), {
        msgID: `${event.event_id}-again`,
      });
      const marker = await submit(ctx.platform, { accountId, formId });
      await eventually(
        () =>
          a.requests.some((r) => r.body.includes(marker.submission_id)) &&
          b.requests.some((r) => r.body.includes(marker.submission_id)),
      );
      const rows = await ctx.platform
        .db('deliveries')
        .where({ submission_id: event.submission_id })
        .select('webhook_id');
      expect(rows.map((r) => r.webhook_id).sort()).toEqual([hookA.id, hookB.id].sort());
      expect(a.requests.filter((r) => r.body.includes(event.submission_id))).toHaveLength(1);
      expect(b.requests.filter((r) => r.body.includes(event.submission_id))).toHaveLength(1);
      expect(off.requests).toHaveLength(0);
    } finally {
      await Promise.all([a.close(), b.close(), off.close()]);
    }
  });
});

describe('webhook delivery of submission.created: spam', () => {
  it('sends nothing for spam', async () => {
    await withHookedForm(async ({ target, accountId, formId }) => {
      const spam = await submit(ctx.platform, { accountId, formId, status: 'spam' });
      // A spam event on the created subject, and a created event for a row that is spam by now (relabelled or deleted first).
      const mislabelled = await submit(ctx.platform, {
        accountId,
        formId,
        status: 'spam',
        subject: SUBJECTS.submissionCreated,
      });
      const relabelled = await submit(ctx.platform, { accountId, formId, rowStatus: 'spam' });
      const genuine = await submit(ctx.platform, { accountId, formId });
      await eventually(() => target.requests.length >= 1);
      for (const e of [spam, mislabelled, relabelled]) {
        await eventually(
          async () => (await ctx.platform.db('outbox').where({ event_id: e.event_id }).first()) === undefined,
          { message: 'the relay publishes (and removes) every outbox row' },
        );
      }
      await eventually(
        async () =>
          (await ctx.platform
            .db('deliveries')
            .where({ submission_id: genuine.submission_id, status: 'succeeded' })
            .first()) !== undefined,
      );
      // every event has been handled (acknowledged) by the fan-out, so nothing below is merely late
      await eventually(async () => {
        const info = await ctx.platform.nats.jsm.consumers.info(ctx.platform.nats.names.eventsStream, CONSUMERS.fanOut);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      });
      expect(target.requests.map((r) => JSON.parse(r.body).data.submission_id)).toEqual([genuine.submission_id]);
      expect(
        await ctx.platform
          .db('deliveries')
          .whereIn('submission_id', [spam.submission_id, mislabelled.submission_id, relabelled.submission_id]),
      ).toEqual([]);
    });
  });
});

describe('webhook delivery of submission.created: the fields as posted', () => {
  it('carries the payload in the order the form posted its fields, not sorted', async () => {
    await withHookedForm(async ({ target, accountId, formId }) => {
      // jsonb would reorder these (shortest first, then bytewise): a, i, name, zeta.
      await submit(ctx.platform, { accountId, formId, payload: { zeta: '1', a: '2', name: 'Ada', i: '0' } });
      const [request] = await eventually(() => target.requests.length === 1 && target.requests);
      expect(Object.keys(JSON.parse(request!.body).data.payload)).toEqual(['zeta', 'a', 'name', 'i']);
    });
  });
});
