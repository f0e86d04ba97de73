import { Type } from '@sinclair/typebox';
import { idPattern, toTimestamp } from '@intake/shared/contracts';
import { routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { createProject, deleteProject, getProject, listProjects, updateProject } from './projects';
import type { ProjectRow } from './project.repository';
import { IdParams, List, Timestamp } from '../platform/schemas';
import { changeBy } from '../platform/audit-trail';
import { FormDefaults } from './forms.routes';

const Project = Type.Object(
  {
    id: Type.String({ description: '`prj_...`' }),
    name: Type.String(),
    is_default: Type.Boolean({
      description: 'the account’s default project: forms created without `project_id` go there; it cannot be deleted',
    }),
    form_count: Type.Integer({ description: 'its forms out of the trash' }),
    form_defaults: FormDefaults,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);
const name = Type.String({ minLength: 1, maxLength: 100, description: 'unique in the account, ignoring case' });
const CreateProject = Type.Object(
  {
    name,
    forms_from: Type.Optional(
      Type.String({
        pattern: idPattern('project'),
        description:
          'another project of the account to start from: the new project gets its `form_defaults` and a copy of ' +
          'each of its forms out of the trash, under the same names (as `POST /v1/forms/:id/duplicate` copies one: ' +
          'no webhooks, integrations, views or submissions)',
      }),
    ),
  },
  { additionalProperties: false },
);
const UpdateProject = Type.Object(
  { name: Type.Optional(name), form_defaults: Type.Optional(FormDefaults) },
  { additionalProperties: false, minProperties: 1 },
);

const present = (row: ProjectRow) => ({
  id: row.id,
  name: row.name,
  is_default: row.is_default,
  form_count: Number(row.form_count),
  form_defaults: row.form_defaults,
  created_at: toTimestamp(row.created_at),
  updated_at: toTimestamp(row.updated_at),
});

/** Creating, renaming and deleting projects shapes who sees what: an admin's. Reading them, anyone's. */
const projectRoute = routeGroup({ tags: ['Projects'], auth: 'management', role: 'admin' });

export const listProjectsRoute = projectRoute({
  method: 'GET',
  path: '/v1/projects',
  operationId: 'listProjects',
  summary: 'List the account’s projects (a member or key limited to projects: those), the default first',
  role: 'viewer',
  responses: { 200: { description: 'The projects', schema: List(Project) } },
  async handler(ctx, { principal }, { db }: Platform) {
    ctx.body = { data: (await listProjects(db, principal)).map(present) };
  },
});

export const createProjectRoute = projectRoute({
  method: 'POST',
  path: '/v1/projects',
  operationId: 'createProject',
  summary: 'Create a project',
  body: CreateProject,
  responses: { 201: { description: 'Created', schema: Project } },
  problems: ['conflict', 'not-found'],
  async handler(ctx, { body, principal }, platform: Platform) {
    const project = await createProject({
      ...changeBy(ctx, principal, platform),
      name: body.name,
      ...(body.forms_from ? { formsFrom: body.forms_from } : {}),
    });
    ctx.status = 201;
    ctx.set('Location', `/v1/projects/${project.id}`);
    ctx.body = present(project);
  },
});

export const getProjectRoute = projectRoute({
  method: 'GET',
  path: '/v1/projects/:id',
  operationId: 'getProject',
  summary: 'Get a project',
  role: 'viewer',
  params: IdParams('project', 'project id'),
  responses: { 200: { description: 'The project', schema: Project } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, { db }: Platform) {
    ctx.body = present(await getProject(db, principal.accountId, params.id));
  },
});

export const updateProjectRoute = projectRoute({
  method: 'PATCH',
  path: '/v1/projects/:id',
  operationId: 'updateProject',
  summary: 'Rename a project, or set the settings its forms inherit (`form_defaults`, replaced as a whole)',
  params: IdParams('project', 'project id'),
  body: UpdateProject,
  responses: { 200: { description: 'The project', schema: Project } },
  problems: ['not-found', 'conflict'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const project = await updateProject({
      ...changeBy(ctx, principal, platform),
      id: params.id,
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.form_defaults !== undefined ? { formDefaults: body.form_defaults } : {}),
    });
    ctx.body = present(project);
  },
});

export const deleteProjectRoute = projectRoute({
  method: 'DELETE',
  path: '/v1/projects/:id',
  operationId: 'deleteProject',
  summary: 'Delete an empty project',
  description:
    '409 `conflict` while it holds forms (those in the trash too: move them with `PATCH /v1/forms/:id { project_id }` ' +
    'or delete them for good) and for the default project. Members and keys limited to it are limited to the rest ' +
    'of their projects from then on (to none, if it was their only one).',
  params: IdParams('project', 'project id'),
  responses: { 204: { description: 'Deleted' } },
  problems: ['not-found', 'conflict'],
  async handler(ctx, { params, principal }, platform: Platform) {
    await deleteProject({ ...changeBy(ctx, principal, platform), id: params.id });
  },
});

export const projectRoutes = [
  listProjectsRoute,
  createProjectRoute,
  getProjectRoute,
  updateProjectRoute,
  deleteProjectRoute,
];
