import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '@weft/core';
import { parseLosslessJson, toJsonText } from '@weft/digest';

/**
 * Within one plugin scope, parses JSON bodies losslessly (`1.0` stays a float, big integers keep
 * their digits) — needed wherever digests are computed over client values as the reference does.
 */
export function useLosslessJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(new ApiError(400, 'request body: empty JSON body'), undefined);
    try {
      done(null, parseLosslessJson(text));
    } catch (e) {
      done(new ApiError(400, `request body: invalid JSON (${(e as Error).message})`), undefined);
    }
  });
}

/** Sends a value whose parts may be stored JSON text (RawJson) or lossless numbers, verbatim. */
export function sendJsonText(reply: FastifyReply, value: unknown): string {
  reply.type('application/json; charset=utf-8');
  return toJsonText(value);
}
