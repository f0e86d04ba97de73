import { Type } from '@sinclair/typebox';
import Ajv from 'ajv';
import { fieldErrors } from './route';

describe('fieldErrors', () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(
    Type.Object(
      {
        status: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('paused')])),
        name: Type.String({ minLength: 1 }),
      },
      { additionalProperties: false },
    ),
  );

  it('names each bad field once, folding literal unions into one message', () => {
    validate({ status: 'gone', name: '', extra: true });
    expect(fieldErrors('body', validate.errors)).toEqual([
      { field: 'body/extra', message: 'is not a known field' },
      { field: 'body/status', message: 'must be one of "live", "paused"' },
      { field: 'body/name', message: 'must NOT have fewer than 1 characters' },
    ]);
  });

  it('reports a missing required field by its name', () => {
    validate({});
    expect(fieldErrors('body', validate.errors)).toEqual([{ field: 'body/name', message: 'is required' }]);
  });
});
