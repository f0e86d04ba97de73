import { Type } from '@sinclair/typebox';
import { type IdKind } from '@intake/shared/contracts';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { IdParams } from './schemas';
import { changeBy, type Audit } from './audit-trail';

type Remove = (props: Platform & { audit: Audit; accountId: string; id: string }) => Promise<unknown>;

const Permanently = Type.Object({
  permanently: Type.Optional(Type.Boolean({ description: 'delete for good now, not to the trash (default false)' })),
});

/**
 * `DELETE <collection>/:id` of something an account owns: 204, or 404 when it is not the account's (the domain's
 * `remove` says which). Saved views are deleted this way; forms and submissions too, to the trash, with `forGood`
 * answering `?permanently=true`.
 */
export function deleteRoute(props: {
  collection: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  kind: IdKind;
  remove: Remove;
  /** What `?permanently=true` does instead of `remove` (which then moves it to the trash). */
  forGood?: Remove;
}) {
  const { forGood } = props;
  return route({
    method: 'DELETE',
    path: `${props.collection}/:id`,
    operationId: props.operationId,
    summary: props.summary,
    ...(props.description === undefined ? {} : { description: props.description }),
    tags: props.tags,
    auth: 'management',
    params: IdParams(props.kind, `${props.kind} id`),
    ...(forGood ? { query: Permanently } : {}),
    responses: { 204: { description: forGood ? 'In the trash (or deleted)' : 'Deleted' } },
    problems: ['not-found'],
    async handler(ctx, { params, query, principal }, platform: Platform) {
      const permanently = (query as { permanently?: boolean } | undefined)?.permanently === true;
      const remove = forGood && permanently ? forGood : props.remove;
      await remove({ ...changeBy(ctx, principal, platform), id: params.id });
    },
  });
}
