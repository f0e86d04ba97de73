import { type IdKind } from '@intake/shared/contracts';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { IdParams } from './schemas';
import { changeBy, type Audit } from './audit-trail';

/**
 * `DELETE <collection>/:id` of something an account owns: 204, or 404 when it is not the account's (the domain's
 * `remove` says which). Forms and submissions are deleted this way.
 */
export function deleteRoute(props: {
  collection: string;
  operationId: string;
  summary: string;
  tags: string[];
  kind: IdKind;
  remove(props: Platform & { audit: Audit; accountId: string; id: string }): Promise<unknown>;
}) {
  return route({
    method: 'DELETE',
    path: `${props.collection}/:id`,
    operationId: props.operationId,
    summary: props.summary,
    tags: props.tags,
    auth: 'management',
    params: IdParams(props.kind, `${props.kind} id`),
    responses: { 204: { description: 'Deleted' } },
    problems: ['not-found'],
    async handler(ctx, { params, principal }, platform: Platform) {
      await props.remove({ ...changeBy(ctx, principal, platform), id: params.id });
    },
  });
}
