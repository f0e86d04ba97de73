import { Type } from '@sinclair/typebox';
import { type Queryable } from '@intake/shared/base';
import { idPattern, problem, type SpamModelOf } from '@intake/shared/contracts';
import { type Principal } from '@intake/shared/auth';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { countCaughtBy, countShadowCaught, countSpamExamples, modelScopeOfForm } from './spam.repository';
import { defaultProjectId, findProject } from './project.repository';

/** As ingest's classifier (services/ingest/src/judge/spam-classifier.ts): examples of each kind before its verdict counts. */
const MIN_EXAMPLES = 10;
/** As ingest's classifier: the score from which a post is spam. */
const SPAM_THRESHOLD = 0.9;
/** As ingest's model store: the most marks of each kind and honeypot catches a model learns from. */
const CAPS = { marksPerKind: 2000, honeypotCatches: 500 };

const SpamModel = Type.Object(
  {
    scope: Type.Object(
      {
        type: Type.Union([Type.Literal('project'), Type.Literal('form')]),
        id: Type.String({
          description: 'the project (`prj_...`) or the form with a classifier of its own (`frm_...`)',
        }),
      },
      { description: 'whose classifier this is' },
    ),
    spam_marks: Type.Integer({ description: 'posts marked spam the classifier learns from' }),
    honeypot_catches: Type.Integer({ description: 'honeypot catches it learns from as spam too' }),
    not_spam_marks: Type.Integer({ description: 'posts marked not spam it learns from' }),
    min_examples: Type.Integer({ description: 'examples of each kind before its verdict counts' }),
    learning: Type.Boolean({ description: 'true while either kind has fewer than `min_examples`' }),
    threshold: Type.Number({ description: 'the score from which a post is spam' }),
    month: Type.String({ description: 'this month (UTC), `YYYY-MM`' }),
    shadow_caught: Type.Integer({
      description:
        'this month’s received posts to forms in shadow mode whose reasons say the rules or the classifier would have ' +
        'caught them; on forms that are on, those whose score only recorded (the starting model’s, or a classifier’s ' +
        'still learning)',
    }),
    caught: Type.Array(
      Type.Object({
        reason: Type.String({
          description: 'the kind of reason that made them spam (`disposable-domain`, `known-spam`, `honeypot`, …)',
        }),
        count: Type.Integer(),
      }),
      {
        description:
          'this month’s spam of the form asked for (`form_id`), or of the classifier’s forms, by the kind of its ' +
          'reason (`spam_reason` up to its colon), most first; `marked-by-owner` counts the owner’s marks',
      },
    ),
  },
  { additionalProperties: false },
);

/** How a classifier stands, and what shadow mode would have caught since `monthStart` on its forms. */
async function spamModelOf(
  db: Queryable,
  props: { accountId: string; scope: SpamModelOf; formId?: string; monthStart: Date },
) {
  const { accountId, scope, monthStart } = props;
  const row = await countSpamExamples(db, accountId, scope, { honeypotCap: CAPS.honeypotCatches });
  const shadowCaught = await countShadowCaught(db, { accountId, scope, since: monthStart, threshold: SPAM_THRESHOLD });
  const caught = await countCaughtBy(db, { accountId, scope, formId: props.formId, since: monthStart });
  const spam = Math.min(row.spam, CAPS.marksPerKind);
  const ham = Math.min(row.ham, CAPS.marksPerKind);
  return {
    scope: { type: scope.kind, id: scope.id },
    spam_marks: spam,
    honeypot_catches: row.honeypot,
    not_spam_marks: ham,
    min_examples: MIN_EXAMPLES,
    learning: spam + row.honeypot < MIN_EXAMPLES || ham < MIN_EXAMPLES,
    threshold: SPAM_THRESHOLD,
    month: monthStart.toISOString().slice(0, 7),
    shadow_caught: shadowCaught,
    caught,
  };
}

/** The classifier asked for: a form's (its project's or its own), a project's, or the caller's first project's. */
async function scopeAsked(db: Queryable, principal: Principal, query: { form_id?: string; project_id?: string }) {
  const { accountId } = principal;
  if (query.form_id) {
    const scope = await modelScopeOfForm(db, accountId, query.form_id);
    if (!scope) throw problem('not-found', `No form ${query.form_id}`);
    return scope;
  }
  const project = query.project_id ?? (await defaultProjectId(db, accountId, principal.projectIds));
  if (!project || !(await findProject(db, accountId, project)))
    throw problem('not-found', `No project ${project ?? ''}`);
  return { kind: 'project' as const, id: project };
}

/** `GET /v1/spam/model`. */
export const getSpamModelRoute = route({
  method: 'GET',
  path: '/v1/spam/model',
  operationId: 'getSpamModel',
  summary: 'How a spam classifier is doing, and what shadow mode would have caught this month',
  description:
    'Each project has a classifier, which learns from its forms’ marks and honeypot catches; a form with ' +
    '`spam_model: "form"` has one of its own. This shows the one `form_id` uses, or `project_id`’s, or (neither) ' +
    'the default project’s (for a caller limited to projects, its first one): the examples it learns from (the ' +
    'owner’s marks of each kind, the honeypot’s catches as spam), whether it is still learning, how many of this ' +
    'month’s received posts to its forms in shadow mode it or the rules would have caught, and what kept this ' +
    'month’s spam of the form (or of its forms) out.',
  query: Type.Object({
    form_id: Type.Optional(Type.String({ pattern: idPattern('form'), description: 'the classifier this form uses' })),
    project_id: Type.Optional(Type.String({ pattern: idPattern('project'), description: 'this project’s' })),
  }),
  tags: ['Spam'],
  auth: 'management',
  responses: { 200: { description: 'The classifier', schema: SpamModel } },
  problems: ['not-found'],
  async handler(ctx, { principal, query }, { db, clock }: Platform) {
    const now = clock.now();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const scope = await scopeAsked(db, principal, query);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await spamModelOf(db, { accountId: principal.accountId, scope, formId: query.form_id, monthStart });
  },
});

export const spamRoutes = [getSpamModelRoute];
