import { Type, type TSchema } from '@sinclair/typebox';
import { ID_PREFIXES, idPattern, type IdKind } from '@intake/shared/contracts';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601 UTC with milliseconds' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** `{ id }` of one kind: an id of another prefix or shape answers 404 before any query (see route.ts). */
export const IdParams = (kind: IdKind, description: string) =>
  Type.Object({
    id: Type.String({ pattern: idPattern(kind), description: `${description}, \`${ID_PREFIXES[kind]}_...\`` }),
  });
export const List = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item) });
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'pass as `cursor` for the next page; null on the last page',
    }),
  });

/** The projects a member or key is limited to (viewers and editors only); left out or null: the whole account. */
export const ProjectIds = Type.Array(Type.String({ pattern: idPattern('project') }), {
  minItems: 1,
  maxItems: 100,
  uniqueItems: true,
  description:
    'limits a viewer or editor to these projects’ forms and what they hold (anything else answers 404, as another ' +
    'account’s would); null or left out: the whole account. Admins and owners always have the whole account',
});
/** `project_ids` as a member or key shows it: empty once every project it named was deleted. */
export const ShownProjectIds = Nullable(
  Type.Array(Type.String(), {
    description: 'the projects it is limited to (empty once all of them were deleted: it sees nothing); null: all',
  }),
);
