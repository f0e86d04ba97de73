import { Type } from '@sinclair/typebox';
import { problem } from '@intake/shared/contracts';

/** A submission's status, as the API names it. */
export const Status = Type.Union([Type.Literal('received'), Type.Literal('spam')]);

/** The list's order by received time. */
export const Order = Type.Union([Type.Literal('desc'), Type.Literal('asc')], {
  description: '`desc` newest first (the default), `asc` oldest first',
});

/** The filters of the submission list and of the exports. */
export const Filters = {
  status: Type.Optional(Status),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'received at or after (inclusive)' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'received before (exclusive)' })),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'text searched in every payload value, ignoring case and accents (`cafe` finds “Café”, `muller` “Müller”, ' +
        '`strasse` “Straße”). Search sees a submission as soon as it is stored: ' +
        'the search index takes it in within seconds (under a heavy load), and until then it is read row by row',
    }),
  ),
};

/**
 * A `since`/`until` the schema accepted as date-time but that is no instant (a leap second, `23:59:60`)
 * or is outside what Postgres stores: 422 rather than a query that fails.
 */
export const when = (value: string | undefined, name: string, location: 'query' | 'body' = 'query') => {
  if (value === undefined) return undefined;
  const at = new Date(value);
  const year = at.getUTCFullYear();
  if (Number.isNaN(at.getTime()) || year < 1 || year > 9999)
    throw problem('validation-failed', `${location}/${name} is not a time that can be searched`, {
      errors: [{ field: `${location}/${name}`, message: 'must be a real instant between years 1 and 9999' }],
    });
  return at;
};
