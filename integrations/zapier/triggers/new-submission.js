'use strict';

const crypto = require('node:crypto');
const { baseUrl } = require('../authentication');

/**
 * A submission as a Zap sees it: its id (Zapier's dedupe key), form, the form's project (the client; null in the
 * account's default project) and time, each posted field as `field__<name>` (so no field can shadow ours), all of them
 * in `payload`, and its files.
 */
function flatten(submission) {
  const fields = {};
  for (const [name, value] of Object.entries(submission.payload || {})) fields[`field__${name}`] = value;
  const project = submission.project || null;
  return {
    id: submission.submission_id,
    form_id: submission.form_id,
    project_id: project ? project.id : null,
    project_name: project ? project.name : null,
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

/** A header of Zapier's raw request, however Zapier spells its name (`Http-Webhook-Signature`, or as sent). */
function header(headers, name) {
  const wanted = [name, `http-${name}`];
  const found = Object.keys(headers || {}).find((k) => wanted.includes(k.toLowerCase()));
  return found === undefined ? undefined : String(headers[found]);
}

/** How old a signed request may be (Standard Webhooks' tolerance, either way of our clock), in seconds. */
const TOLERANCE_SECONDS = 5 * 60;

/**
 * Whether the request is Intake's, signed for this subscription, and recent: its `webhook-signature` (Standard
 * Webhooks: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the secret's
 * base64 part after `whsec_`) made with the secret this subscription was given, and its `webhook-timestamp` within
 * five minutes of now, so a request caught and sent again later triggers nothing. A subscription without a secret
 * (made before the app kept them) can check nothing and accepts nothing: turning the Zap off and on renews it.
 */
function signedByIntake(bundle, nowMs = Date.now()) {
  const secret = bundle.subscribeData && bundle.subscribeData.secret;
  if (typeof secret !== 'string' || !secret.startsWith('whsec_')) return false;
  const raw = bundle.rawRequest || {};
  if (typeof raw.content !== 'string') return false;
  const id = header(raw.headers, 'webhook-id');
  const timestamp = header(raw.headers, 'webhook-timestamp');
  const signatures = header(raw.headers, 'webhook-signature');
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = Buffer.from(
    crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${raw.content}`, 'utf8').digest('base64'),
  );
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature || '');
    return version === 'v1' && given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

const SAMPLE = flatten({
  submission_id: 'sub_01hx3m2k9d7b8c6n4p5q0r1s2t',
  form_id: 'frm_01hx3m2k9d7b8c6n4p5q0r1s2t',
  project: { id: 'prj_01hx3m2k9d7b8c6n4p5q0r1s2t', name: 'Acme Dental' },
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
     * A delivery's envelope (`submission.created`), once its signature and age are checked; a request not signed with
     * the subscription's secret, one older than five minutes, and a test ping (`webhook.test`), trigger nothing.
     */
    perform(z, bundle) {
      if (!signedByIntake(bundle)) return [];
      const envelope = bundle.cleanedRequest || {};
      if (envelope.type !== 'submission.created' || !envelope.data) return [];
      const data = envelope.data;
      return [flatten({ ...data, received_at: receivedAt(data.submission_id) })];
    },

    /** The polling fallback, and what the Zap editor shows: the form's newest submissions, with its project. */
    async performList(z, bundle) {
      const form = `${baseUrl(bundle)}/v1/forms/${encodeURIComponent(bundle.inputData.form_id)}`;
      const [res, about] = await Promise.all([
        z.request({ url: `${form}/submissions`, params: { limit: 25 } }),
        z.request({ url: form }),
      ]);
      return res.data.data.map((s) =>
        flatten({
          submission_id: s.id,
          form_id: s.form_id,
          project: about.data.project,
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
      { key: 'project_id', label: 'Project ID' },
      { key: 'project_name', label: 'Project' },
      { key: 'received_at', label: 'Received at', type: 'datetime' },
    ],
  },
};
