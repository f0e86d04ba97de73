import { Type, type TSchema } from '@sinclair/typebox';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601 UTC with milliseconds' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const IdParams = (description: string) =>
  Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description }) });
export const List = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item) });
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'pass as `cursor` for the next page; null on the last page',
    }),
  });
