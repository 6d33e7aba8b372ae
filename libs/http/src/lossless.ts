import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@weft/core';
import { parseLosslessJson, toJsonText, type RawJson } from '@weft/digest';
import { checkedJsonText } from './json-body';
import { defaultRequestLimits } from './limits';
import { mayHoldRefs } from './tenancy';
import type { Serialized } from './route';
import { whenHeavyBodyTurn } from './turns';

/**
 * Within one plugin scope, parses JSON bodies losslessly (`1.0` stays a float, big integers keep
 * their digits) — needed wherever digests are computed over client values as the reference does.
 */
export function useLosslessJsonBodies(app: FastifyInstance): void {
  const limits = app.weftLimits ?? defaultRequestLimits;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, raw, done) =>
    whenHeavyBodyTurn((raw as Buffer).length, () => parseLossless(req, raw as Buffer, done)),
  );
  const parseLossless = (req: FastifyRequest, raw: Buffer, done: (err: Error | null, body?: unknown) => void) => {
    let text: string;
    try {
      // The same UTF-8, depth and size checks as the shared parser, before the lossless parse.
      text = checkedJsonText(raw as Buffer, limits);
      req.bodyMayHoldRefs = mayHoldRefs(raw as Buffer);
    } catch (e) {
      return done(e as Error, undefined);
    }
    try {
      done(null, parseLosslessJson(text));
    } catch (e) {
      done(new ApiError(400, `request body: invalid JSON (${(e as Error).message})`), undefined);
    }
  };
}

/**
 * The JSON a value stands for once sent: a RawJson part is stored JSON text sent as is, so it
 * stands for whatever JSON the response schema puts there.
 */
export type AsSent<T> = T extends RawJson
  ? // eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored JSON text is any JSON value
    any
  : T extends readonly (infer E)[]
    ? AsSent<E>[]
    : T extends object
      ? { [K in keyof T]: AsSent<T[K]> }
      : T;

/** Sends a value whose parts may be stored JSON text (RawJson) or lossless numbers, verbatim. */
export function sendJsonText<T>(reply: FastifyReply, value: T): Serialized<AsSent<T>> {
  reply.type('application/json; charset=utf-8');
  return toJsonText(value) as Serialized<AsSent<T>>;
}
