import { Type, type TSchema } from '@sinclair/typebox';
import { ID_PREFIXES, idPattern, type IdKind } from '@intake/shared';

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
