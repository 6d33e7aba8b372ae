import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { FILE_CREATE_PATH, projectId as projectIdSchema } from '@weft/api';
import { ApiError, badRequest, type Caller } from '@weft/core';
import { authenticateHook, enforceTenancy, type Authenticator } from '@weft/http';
import { createFile } from '@weft/objects';
import type { Store } from '@weft/store';

export interface FileWriteDeps {
  store: Store;
  auth: Authenticator;
}

/**
 * /file/create (and the reference router's /files/create): multipart/form-data with a
 * `project_id` field (optionally `expected_digest`) and one `file` part, as the Weave SDK
 * uploads an op's source. Its own plugin scope, so the multipart parser exists only here;
 * authenticated and rate-limited before the body is read, tenancy checked on `project_id`.
 */
export async function fileWriteRoutes(app: FastifyInstance, deps: FileWriteDeps): Promise<void> {
  const bodyLimit = app.initialConfig.bodyLimit ?? 32 * 1024 * 1024;
  await app.register(multipart, { limits: { fileSize: bodyLimit, files: 1, fields: 8, fieldSize: 64 * 1024, parts: 9 } });
  const authenticate = authenticateHook(app, deps.auth, 'basic');
  const handler = async (request: FastifyRequest) => {
    if (!request.isMultipart()) throw new ApiError(415, 'send multipart/form-data with a `project_id` field and a `file` part');
    const caller: Caller = request.caller!;
    const fields: Record<string, string> = {};
    let file: { name: string; content: Buffer } | null = null;
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw badRequest(`${part.fieldname}: unexpected file part (send it as \`file\`)`, part.fieldname);
        file = { name: part.filename || 'file', content: await part.toBuffer() };
      } else {
        fields[part.fieldname] = String(part.value);
      }
    }
    const parsed = projectIdSchema.safeParse(fields.project_id);
    if (!parsed.success)
      throw new ApiError(422, 'project_id: a form field `project_id` of the form <entity>/<project> is required', { field: 'project_id' });
    enforceTenancy(caller, { project_id: parsed.data }, { refsPossible: false });
    if (!file) throw new ApiError(422, 'file: a `file` part is required', { field: 'file' });
    return createFile(deps.store, parsed.data, file.name, file.content, fields.expected_digest || null);
  };
  const doc = {
    tag: 'sdk',
    summary: 'Store a file (multipart: project_id, file) → its digest',
    bodyTypes: ['multipart/form-data'],
  } as const;
  for (const path of [FILE_CREATE_PATH, '/files/create']) app.post(path, { onRequest: authenticate, config: { doc } }, handler);
}
