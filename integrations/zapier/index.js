'use strict';

const { version } = require('./package.json');
const { version: platformVersion } = require('zapier-platform-core');
const authentication = require('./authentication');
const forms = require('./triggers/forms');
const newSubmission = require('./triggers/new-submission');

/** Every request carries the management key; a refusal is shown to the Zap's owner with Intake's own words. */
function withKey(request, z, bundle) {
  request.headers = {
    ...request.headers,
    authorization: `Bearer ${bundle.authData.api_key}`,
    accept: 'application/json',
  };
  return request;
}

/** A refused key asks the owner to connect again; any other refusal is shown in Intake's own words. */
function refused(response, z) {
  if (response.status < 400) return response;
  const problem = response.data || {};
  const said = problem.detail || problem.title || `Intake answered ${response.status}`;
  if (response.status === 401 || /\/invalid-key$/.test(String(problem.type || '')))
    throw new z.errors.RefreshAuthError(`Intake refused the management key: ${said}`);
  throw new z.errors.Error(said, 'IntakeError', response.status);
}

module.exports = {
  version,
  platformVersion,
  authentication: {
    type: authentication.type,
    fields: authentication.fields,
    test: authentication.test,
    connectionLabel: authentication.connectionLabel,
  },
  // The app makes its requests with z.request, which Zapier logs; its patch of Node's http module would log nothing more
  // (and stays patched in a process that runs the app beside other code, as the tests do).
  flags: { skipHttpPatch: true },
  beforeRequest: [withKey],
  afterResponse: [refused],
  triggers: { [forms.key]: forms, [newSubmission.key]: newSubmission },
};
