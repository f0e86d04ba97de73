'use strict';

/**
 * A management key of the owner's Intake, and where that Intake is: every request goes to `base_url` with the key as
 * its bearer token. The connection is tested by reading the account, and named after it.
 */
const baseUrl = (bundle) => String(bundle.authData.base_url || '').replace(/\/+$/, '');

module.exports = {
  type: 'custom',
  fields: [
    {
      key: 'base_url',
      label: 'Intake address',
      required: true,
      type: 'string',
      helpText: 'Where your Intake answers, such as `https://forms.example.com` (its PUBLIC_BASE_URL).',
    },
    {
      key: 'api_key',
      label: 'Management key',
      required: true,
      type: 'password',
      helpText: 'A management key from the console’s API keys page (a key of role editor or admin).',
    },
  ],
  async test(z, bundle) {
    return (await z.request({ url: `${baseUrl(bundle)}/v1/account` })).data;
  },
  connectionLabel: '{{json.name}}',
  baseUrl,
};
