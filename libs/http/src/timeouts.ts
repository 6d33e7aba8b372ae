import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, metrics, type Logger } from '@weft/core';
import { inProcess } from './in-process';
import type { RequestLimits } from './limits';

/** Node checks its header and request deadlines this often (its default, 30 s, is too coarse). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/**
 * The options of Node's HTTP server for the first phases of a request: the headers must arrive
 * within `headersTimeoutMs` of the first byte, and the whole request (headers and body) within
 * `requestTimeoutMs`; Node answers 408 and closes otherwise. Streaming responses are not
 * concerned: these end once the request is received.
 */
export function serverTimeoutOptions(limits: RequestLimits): { http: Record<string, number>; requestTimeout: number } {
  const requestTimeout = Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs + 1);
  return {
    http: { headersTimeout: limits.headersTimeoutMs, requestTimeout, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    requestTimeout,
  };
}

const BODY_TIMEOUT_RESPONSE = (ms: number) => {
  const body = JSON.stringify({ status: 408, reason: `request body: nothing received for ${ms} ms; connection closed` });
  return `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

/**
 * The timeouts Node has no option for, as hooks:
 * - body inactivity: while a body is being received, a socket silent for `bodyIdleTimeoutMs`
 *   gets a 408 and is closed (a client trickling a byte now and then still meets the whole-request
 *   deadline above);
 * - the whole request of a non-streaming route: not answered within `requestTimeoutMs` of its
 *   arrival, it gets 503 (the work may still finish; a write's own publish deadline is shorter).
 */
export function installRequestTimeouts(app: FastifyInstance, limits: RequestLimits, log: Logger): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions.config;
    if (config?.probe) return;
    const socket = request.raw.socket;
    const hasBody =
      request.headers['content-length'] !== undefined
        ? Number(request.headers['content-length']) > 0
        : request.headers['transfer-encoding'] !== undefined;
    if (hasBody && !request.raw.complete && !inProcess(request.raw)) {
      // Node emits 'timeout' on the request while its body is incomplete; a listener there
      // keeps Node from destroying the socket silently, so the client can be told why.
      const onIdle = () => {
        metrics.requestTimeouts.inc({ phase: 'body' });
        log.warn(
          { method: request.method, url: request.url, reqId: request.id, idleMs: limits.bodyIdleTimeoutMs },
          'request body stalled; connection closed',
        );
        if (!socket.destroyed) {
          socket.write(BODY_TIMEOUT_RESPONSE(limits.bodyIdleTimeoutMs));
          socket.destroySoon();
        }
      };
      request.raw.once('timeout', onIdle);
      socket.setTimeout(limits.bodyIdleTimeoutMs);
      request.raw.once('end', () => {
        request.raw.off('timeout', onIdle);
        socket.setTimeout(0);
      });
    }
    if (!config?.streaming) {
      const timer = setTimeout(() => {
        if (reply.sent || reply.raw.headersSent) return;
        metrics.requestTimeouts.inc({ phase: 'request' });
        log.warn(
          { method: request.method, url: request.url, reqId: request.id, ms: limits.requestTimeoutMs },
          'request not answered in time',
        );
        reply.send(
          new ApiError(503, `request not answered within ${limits.requestTimeoutMs} ms; retry later`, { headers: { 'Retry-After': '5' } }),
        );
      }, limits.requestTimeoutMs);
      timer.unref();
      reply.raw.once('close', () => clearTimeout(timer));
    }
  });
}
