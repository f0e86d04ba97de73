import { Type } from '@sinclair/typebox';
import { idPattern, problem } from '@intake/shared/contracts';
import { checkFileLink, route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { findFileById } from './submission.repository';

/** RFC 6266 / 5987 Content-Disposition that survives any file name. */
function attachmentHeader(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** `GET /v1/files/:id`: a stored file, through a signed link. */
export const downloadFileRoute = route({
  method: 'GET',
  path: '/v1/files/:id',
  operationId: 'downloadFile',
  summary: 'Download a stored file through a signed link (from `GET /v1/submissions/:id`)',
  description:
    'The link is the authorisation: no key is needed until it expires. An altered or foreign ' +
    'link answers 404; an expired one 410 `link-expired`.',
  tags: ['Submissions'],
  auth: 'none',
  params: Type.Object({ id: Type.String({ pattern: idPattern('file'), description: 'file id, `fil_...`' }) }),
  query: Type.Object({
    expires: Type.Optional(Type.String({ maxLength: 20 })),
    signature: Type.Optional(Type.String({ maxLength: 200 })),
  }),
  responses: {
    200: {
      description: 'The file, as an attachment',
      contentType: '*/*',
      schema: Type.String({ contentMediaType: 'application/octet-stream' }),
    },
  },
  problems: ['not-found', 'link-expired'],
  async handler(ctx, { params, query }, { db, secrets, clock, blobs }: Platform) {
    const verdict = checkFileLink({
      secrets,
      fileId: params.id,
      expires: query.expires ?? '',
      signature: query.signature ?? '',
      now: clock.now(),
    });
    if (verdict === 'invalid') throw problem('not-found', 'This download link is not valid');
    if (verdict === 'expired')
      throw problem('link-expired', 'This download link has expired; fetch the submission again for a fresh one');
    const file = await findFileById(db, params.id);
    if (!file) throw problem('not-found', 'The file no longer exists');
    const body = await blobs.get(file.storage_key).catch((err: { code?: string; name?: string }) => {
      if (err?.code === 'ENOENT' || err?.name === 'NoSuchKey' || err?.name === 'NotFound')
        throw problem('not-found', 'The file no longer exists');
      throw err;
    });
    ctx.set('Content-Disposition', attachmentHeader(file.filename));
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'private, no-store');
    ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
    ctx.type = file.content_type || 'application/octet-stream';
    ctx.length = Number(file.size);
    ctx.body = body;
  },
});

/** The file download route, as the OpenAPI document lists it. */
export const fileRoutes = [downloadFileRoute];
