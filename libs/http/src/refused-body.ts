import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { metrics, payloadTooLarge } from '@weft/core';
import { inProcess } from './in-process';
import type { RequestLimits } from './limits';

declare module 'fastify' {
  interface FastifyInstance {
    weftRefusedBodies: RefusedBodies;
  }
}

/**
 * What becomes of the body of a request refused before it was read (413 by Content-Length, 503
 * by admission, 429, 401/403): a client still sending it when the answer comes gets EPIPE or
 * ECONNRESET instead of the status if the connection is closed under it (Python's http.client
 * reads nothing until it has sent everything). So, as nginx's lingering close, the body is read
 * and discarded, and the connection then serves the next request. The cost is bounded: all the
 * bodies being drained at once hold at most `maxBytes` (by Content-Length; a chunked body by
 * what it sent), a body that would not fit is not read (`Connection: close`, as before), and a
 * drain still going after `deadlineMs` is cut.
 */
/** The largest refused body drained under overload (503, 429); a larger one closes its connection. */
export const OVERLOAD_DRAIN_MAX_BYTES = 64 * 1024;

export class RefusedBodies {
  /** Bytes reserved by the drains in progress. */
  private held = 0;

  constructor(
    readonly maxBytes: number,
    readonly deadlineMs: number,
  ) {}

  /** Bytes the drains in progress hold (tests, /metrics). */
  get drainingBytes(): number {
    return this.held;
  }

  /**
   * Reads and discards the rest of `req`'s body, or returns false when the bound has no room
   * for it (the caller then closes the connection). `declared` is its Content-Length, null
   * when chunked; a body past `maxBodyBytes` is cut.
   */
  drain(req: IncomingMessage, declared: number | null, maxBodyBytes = Infinity): boolean {
    let reserved = declared ?? 0;
    if (this.maxBytes === 0 || this.held + reserved > this.maxBytes) return false;
    this.held += reserved;
    const socket = req.socket;
    let drained = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.held -= reserved;
      req.off('data', onData);
      socket.off('close', finish);
      metrics.refusedBodyBytesDrained.inc(drained);
    };
    const cut = () => {
      finish();
      metrics.refusedBodies.inc({ outcome: 'cut' });
      socket.destroy();
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > maxBodyBytes) return cut();
      // A chunked body reserves what it sends, as it sends it.
      if (drained > reserved) {
        const more = drained - reserved;
        if (this.held + more > this.maxBytes) return cut();
        this.held += more;
        reserved += more;
      }
    };
    const timer = setTimeout(cut, this.deadlineMs);
    timer.unref();
    req.on('data', onData);
    req.once('end', finish);
    // Once answered, the request is no longer told of its socket closing (a client leaving mid-body).
    socket.once('close', finish);
    req.resume();
    metrics.refusedBodies.inc({ outcome: 'drained' });
    return true;
  }

  /**
   * Called by the error handler before it answers: when the request's body is not (all) read,
   * drain it or mark the answer `Connection: close`. A client that asked `Expect:
   * 100-continue` and was not told to continue sends no body: its connection closes.
   */
  settle(request: FastifyRequest, reply: FastifyReply, status: number): void {
    const req = request.raw;
    if (req.complete || req.destroyed || !hasBody(req) || inProcess(req)) return;
    // Under overload (503, 429) reading refused bodies spends what the server lacks: only small
    // ones are drained (Kafka mode, 128 clients retrying 480 KB bodies without waiting: 0.54 of
    // the polite clients' rate with every body drained, 1.03 with none).
    const overload = status === 503 || status === 429;
    if (awaitingContinue.has(req)) {
      reply.header('Connection', 'close');
      return;
    }
    const length = req.headers['content-length'];
    const declared = length === undefined ? null : Number(length);
    if (declared !== null && !Number.isFinite(declared)) {
      reply.header('Connection', 'close');
      return;
    }
    if (overload && declared !== null && declared > OVERLOAD_DRAIN_MAX_BYTES) {
      metrics.refusedBodies.inc({ outcome: 'closed' });
      reply.header('Connection', 'close');
      return;
    }
    if (this.drain(req, declared, overload ? OVERLOAD_DRAIN_MAX_BYTES : Infinity)) {
      // Fastify marks every parse failure `Connection: close`; the drain makes it unnecessary.
      reply.removeHeader('Connection');
    } else {
      metrics.refusedBodies.inc({ outcome: 'closed' });
      reply.header('Connection', 'close');
    }
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}

/** Requests that asked `Expect: 100-continue` and have not been told to continue yet. */
const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * Installs, first among the hooks: the 413 of a body whose Content-Length is over the route's
 * limit (before admission, so it is the answer whatever the load, and before any `100
 * Continue`), and the handling of `Expect: 100-continue`: the 100 goes out only once every
 * check before the body passed, so a refused client never sends its body. The error handler
 * drains refused bodies through `app.weftRefusedBodies`.
 */
export function installRefusedBodies(app: FastifyInstance, limits: RequestLimits): RefusedBodies {
  const refused = new RefusedBodies(limits.refusedBodyDrainBytes, limits.refusedBodyDrainMs);
  app.decorate('weftRefusedBodies', refused);
  // Node answers 100 Continue itself unless someone listens for 'checkContinue'.
  app.server.on('checkContinue', (req: IncomingMessage, res) => {
    awaitingContinue.add(req);
    app.server.emit('request', req, res);
  });
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const length = request.headers['content-length'];
    const limit = request.routeOptions.bodyLimit;
    if (length !== undefined && limit !== undefined && Number(length) > limit) {
      throw payloadTooLarge(`request body: ${length} bytes, larger than the limit of ${limit} bytes`);
    }
  });
  // The last step before the body is read: every earlier check passed.
  app.addHook('preParsing', async (request: FastifyRequest, reply: FastifyReply) => {
    if (awaitingContinue.delete(request.raw)) reply.raw.writeContinue();
  });
  return refused;
}
