'use strict';

const crypto = require('node:crypto');
const { baseUrl } = require('../authentication');

/**
 * A submission as a Zap sees it: its id (Zapier's dedupe key), form and time, each posted field as `field__<name>` (so
 * no field can shadow ours), all of them in `payload`, and its files.
 */
function flatten(submission) {
  const fields = {};
  for (const [name, value] of Object.entries(submission.payload || {})) fields[`field__${name}`] = value;
  return {
    id: submission.submission_id,
    form_id: submission.form_id,
    received_at: submission.received_at,
    payload: submission.payload || {},
    ...fields,
    files: submission.files || [],
  };
}

/** The time a submission id carries (a ULID's first ten characters, Crockford base 32, in milliseconds). */
function receivedAt(id) {
  const digits = '0123456789abcdefghjkmnpqrstvwxyz';
  const time = String(id).replace(/^sub_/, '').slice(0, 10).toLowerCase();
  let ms = 0;
  for (const c of time) ms = ms * 32 + digits.indexOf(c);
  return new Date(ms).toISOString();
}

/** A header of Zapier's raw request, however Zapier spells its name (`Http-X-Service-Signature`, or as sent). */
function header(headers, name) {
  const wanted = [name, `http-${name}`];
  const found = Object.keys(headers || {}).find((k) => wanted.includes(k.toLowerCase()));
  return found === undefined ? undefined : String(headers[found]);
}

/**
 * Whether the request carries `x-service-signature` (`sha256=` and the hex HMAC-SHA256 of the raw body, keyed with the
 * whole `whsec_…` secret) made with the secret this subscription was given. A subscription made before the app kept
 * secrets has none to check with, and is trusted as before.
 */
function signedByIntake(bundle) {
  const secret = bundle.subscribeData && bundle.subscribeData.secret;
  if (!secret) return true;
  const raw = bundle.rawRequest || {};
  if (typeof raw.content !== 'string') return false;
  const given = Buffer.from(header(raw.headers, 'x-service-signature') || '');
  const expected = Buffer.from(
    `sha256=${crypto.createHmac('sha256', secret).update(raw.content, 'utf8').digest('hex')}`,
  );
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

const SAMPLE = flatten({
  submission_id: 'sub_01hx3m2k9d7b8c6n4p5q0r1s2t',
  form_id: 'frm_01hx3m2k9d7b8c6n4p5q0r1s2t',
  received_at: '2024-05-06T09:30:00.000Z',
  payload: { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello' },
  files: [],
});

module.exports = {
  key: 'new_submission',
  noun: 'Submission',
  display: {
    label: 'New Submission',
    description: 'Triggers when a form receives a submission that is not spam.',
  },
  operation: {
    type: 'hook',
    inputFields: [{ key: 'form_id', label: 'Form', required: true, dynamic: 'form.id.name' }],

    /**
     * Subscribes: a webhook of the form posting to Zapier's URL; its id is kept to unsubscribe, its signing secret to
     * check each request.
     */
    async performSubscribe(z, bundle) {
      const res = await z.request({
        url: `${baseUrl(bundle)}/v1/forms/${encodeURIComponent(bundle.inputData.form_id)}/webhooks`,
        method: 'POST',
        body: { url: bundle.targetUrl },
      });
      return { id: res.data.id, secret: res.data.secret };
    },

    async performUnsubscribe(z, bundle) {
      await z.request({
        url: `${baseUrl(bundle)}/v1/webhooks/${encodeURIComponent(bundle.subscribeData.id)}`,
        method: 'DELETE',
        skipThrowForStatus: true,
      });
      return {};
    },

    /**
     * A delivery's envelope (`submission.created`), once its signature is checked; a request not signed with the
     * subscription's secret, and a test ping (`webhook.test`), trigger nothing.
     */
    perform(z, bundle) {
      if (!signedByIntake(bundle)) return [];
      const envelope = bundle.cleanedRequest || {};
      if (envelope.type !== 'submission.created' || !envelope.data) return [];
      const data = envelope.data;
      return [flatten({ ...data, received_at: receivedAt(data.submission_id) })];
    },

    /** The polling fallback, and what the Zap editor shows: the form's newest submissions. */
    async performList(z, bundle) {
      const res = await z.request({
        url: `${baseUrl(bundle)}/v1/forms/${encodeURIComponent(bundle.inputData.form_id)}/submissions`,
        params: { limit: 25 },
      });
      return res.data.data.map((s) =>
        flatten({
          submission_id: s.id,
          form_id: s.form_id,
          received_at: s.received_at,
          payload: s.payload,
          files: s.files,
        }),
      );
    },

    sample: SAMPLE,
    outputFields: [
      { key: 'id', label: 'Submission ID' },
      { key: 'form_id', label: 'Form ID' },
      { key: 'received_at', label: 'Received at', type: 'datetime' },
    ],
  },
};
