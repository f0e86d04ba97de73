'use strict';

const { baseUrl } = require('../authentication');

/**
 * The account's forms, for the Form field of the New Submission trigger (hidden: it triggers nothing), each named with
 * its project when it is in one, so an agency tells its clients' forms of one name apart.
 */
module.exports = {
  key: 'form',
  noun: 'Form',
  display: { label: 'Form', description: 'Lists your forms.', hidden: true },
  operation: {
    async perform(z, bundle) {
      const res = await z.request({ url: `${baseUrl(bundle)}/v1/forms`, params: { limit: 100 } });
      return res.data.data.map((form) => ({
        id: form.id,
        name: form.project ? `${form.name} — ${form.project.name}` : form.name,
      }));
    },
    sample: { id: 'frm_01hx3m2k9d7b8c6n4p5q0r1s2t', name: 'Contact — Acme Dental' },
  },
};
