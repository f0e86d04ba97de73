import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { toTimestamp } from '@intake/shared/contracts';
import { routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { changeMemberRole, inviteMember, removeMember, resendInvitation } from './members';
import { listMembers, type MemberRow } from './member.repository';
import {
  IdParams,
  List,
  Nullable,
  NullableTimestamp,
  ProjectIds,
  ShownProjectIds,
  Timestamp,
} from '../platform/schemas';
import { auditOf } from '../platform/audit-trail';

const RoleSchema = Type.Union(
  [Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin'), Type.Literal('owner')],
  {
    description:
      '`viewer` reads and exports; `editor` also changes forms, submissions and webhooks; `admin` also manages ' +
      'API keys, members below owner and reads the audit log; `owner` also manages owners',
  },
);

const Member = Type.Object(
  {
    id: Type.String({ description: '`mem_...`' }),
    email: Type.String(),
    name: Nullable(Type.String()),
    role: RoleSchema,
    project_ids: ShownProjectIds,
    status: Type.Union([Type.Literal('active'), Type.Literal('invited')]),
    created_at: Timestamp,
    last_sign_in_at: NullableTimestamp,
  },
  { additionalProperties: false },
);

/** A member invited, or invited again, with their link: single use, valid 7 days, shown this once. */
const Invited = Type.Composite([
  Member,
  Type.Object({ invitation_url: Type.String({ description: 'single use, valid 7 days, shown this once' }) }),
]);

/** Answers 201 with the invited member and their link, never cached (the link signs them in). */
function answerInvited(ctx: Context, invited: { member: MemberRow; invitationUrl: string }) {
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 201;
  ctx.body = { ...presentMember(invited.member), invitation_url: invited.invitationUrl };
}

export function presentMember(row: MemberRow) {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    project_ids: row.project_ids,
    status: row.status,
    created_at: toTimestamp(row.created_at),
    last_sign_in_at: row.last_sign_in_at ? toTimestamp(row.last_sign_in_at) : null,
  };
}

const memberRoute = routeGroup({ tags: ['Members'], auth: 'management' });

/** `GET /v1/members`. */
export const listMembersRoute = memberRoute({
  method: 'GET',
  path: '/v1/members',
  operationId: 'listMembers',
  summary: 'List the account’s members and open invitations',
  accountWide: true,
  responses: { 200: { description: 'The members, oldest first', schema: List(Member) } },
  async handler(ctx, { principal }, { db }: Platform) {
    ctx.body = { data: (await listMembers(db, principal.accountId)).map(presentMember) };
  },
});

/** `POST /v1/members`: invites a person. */
export const inviteMemberRoute = memberRoute({
  method: 'POST',
  path: '/v1/members',
  operationId: 'inviteMember',
  summary: 'Invite a person: a member in status `invited` and a single-use invitation link (shown once, valid 7 days)',
  description:
    'The link is also e-mailed when SMTP is configured. Only an owner can invite an owner. The person opens ' +
    'the link in the console and sets a password, or signs in with SSO as that e-mail.',
  role: 'admin',
  body: Type.Object(
    {
      email: Type.String({ format: 'email', maxLength: 320 }),
      role: RoleSchema,
      project_ids: Type.Optional(Nullable(ProjectIds)),
    },
    { additionalProperties: false },
  ),
  responses: {
    201: {
      description: 'Invited',
      schema: Invited,
    },
  },
  problems: ['conflict', 'forbidden'],
  async handler(ctx, { body, principal }, platform: Platform) {
    const invited = await inviteMember({
      platform,
      accountId: principal.accountId,
      email: body.email,
      role: body.role,
      projectIds: body.project_ids,
      actorRole: principal.role,
      audit: auditOf(ctx, principal, platform),
      now: platform.clock.now(),
    });
    answerInvited(ctx, invited);
  },
});

/** `PATCH /v1/members/:id`. */
export const updateMemberRoute = memberRoute({
  method: 'PATCH',
  path: '/v1/members/:id',
  operationId: 'updateMember',
  summary: 'Change a member’s role or the projects they are limited to (at once, on their open sessions too)',
  description:
    'Only an owner can make or unmake an owner; the account’s last owner stays one (409). A viewer or editor keeps ' +
    'their projects unless `project_ids` is given (null: the whole account); a member made admin or owner has the ' +
    'whole account.',
  role: 'admin',
  params: IdParams('member', 'member id'),
  body: Type.Object(
    { role: Type.Optional(RoleSchema), project_ids: Type.Optional(Nullable(ProjectIds)) },
    { additionalProperties: false, minProperties: 1 },
  ),
  responses: { 200: { description: 'The member', schema: Member } },
  problems: ['not-found', 'conflict', 'forbidden'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const { db, clock } = platform;
    const member = await changeMemberRole({
      db,
      principal,
      id: params.id,
      role: body.role,
      projectIds: body.project_ids,
      audit: auditOf(ctx, principal, platform),
      now: clock.now(),
    });
    ctx.body = presentMember(member);
  },
});

/** `DELETE /v1/members/:id`. */
export const removeMemberRoute = memberRoute({
  method: 'DELETE',
  path: '/v1/members/:id',
  operationId: 'removeMember',
  summary: 'Remove a member (their console sessions end at once), and with `revoke_keys=true` the keys they minted',
  description:
    'Only an owner can remove an owner; the account’s last active owner cannot be removed (409). The keys a member ' +
    'minted outlive them unless `revoke_keys=true` revokes them in the same change (each audited as ' +
    '`api_key.revoked`); `GET /v1/api-keys` shows who minted each key (`created_by`). Refused (409) when that would ' +
    'revoke the account’s last active management key.',
  role: 'admin',
  params: IdParams('member', 'member id'),
  query: Type.Object({
    revoke_keys: Type.Optional(
      Type.Boolean({ description: 'also revoke every active key the member minted (default false)' }),
    ),
  }),
  responses: { 204: { description: 'Removed' } },
  problems: ['not-found', 'conflict', 'forbidden'],
  async handler(ctx, { params, query, principal }, platform: Platform) {
    const { db, clock } = platform;
    await removeMember({
      db,
      principal,
      id: params.id,
      revokeKeys: query.revoke_keys === true,
      audit: auditOf(ctx, principal, platform),
      now: clock.now(),
    });
  },
});

/** `POST /v1/members/:id/invitation`: a new link for a member who has not joined. */
export const resendInvitationRoute = memberRoute({
  method: 'POST',
  path: '/v1/members/:id/invitation',
  operationId: 'resendInvitation',
  summary: 'Send an invited member a new invitation link (the links sent before stop working)',
  description:
    'For a member who has not joined yet (409 once they have): a new single-use link valid 7 days, e-mailed when ' +
    'SMTP is configured and returned this once; every earlier link of theirs is spent. Only an owner can send an ' +
    'owner’s invitation again. Audited as `member.invitation_resent`.',
  role: 'admin',
  params: IdParams('member', 'member id'),
  responses: {
    201: {
      description: 'Sent again',
      schema: Invited,
    },
  },
  problems: ['not-found', 'conflict', 'forbidden'],
  async handler(ctx, { params, principal }, platform: Platform) {
    const invited = await resendInvitation({
      platform,
      principal,
      id: params.id,
      audit: auditOf(ctx, principal, platform),
      now: platform.clock.now(),
    });
    answerInvited(ctx, invited);
  },
});

/** The member routes, in the order the OpenAPI document lists them. */
export const memberRoutes = [
  listMembersRoute,
  inviteMemberRoute,
  updateMemberRoute,
  removeMemberRoute,
  resendInvitationRoute,
];
