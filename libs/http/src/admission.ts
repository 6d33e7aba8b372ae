import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, metrics } from '@weft/core';
import type { RequestLimits } from './limits';

/** What admission needs of a bus (libs/bus's Bus.pressure); no I/O, called per request. */
export interface PressureGauge {
  pressure(): { pendingBytes: number; maxPendingBytes: number; down: string | null; behind: string | null };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Health probes and /metrics: never refused, not counted. */
    probe?: boolean;
    /** The route publishes its body to the bus: refused while the bus is full or down. */
    publishes?: boolean;
    /** The response is a stream with its own rules: no whole-request deadline (timeouts.ts). */
    streaming?: boolean;
  }
  interface FastifyInstance {
    weftAdmission: Admission;
  }
}

/** Bodies sent without Content-Length (chunked) count as this many bytes until they are read. */
export const CHUNKED_BODY_ESTIMATE = 1024 * 1024;

/**
 * Admission before work: every request is admitted or refused (503 + Retry-After) in its
 * first hook, before its body is read, from what is known then — its Content-Length, the
 * requests and body bytes already admitted and not yet answered, and, for routes that publish
 * to the bus, the bus's pending bytes and whether its broker is known to be down. An admitted
 * request holds its bytes until its response is finished (or its connection closed). A
 * refusal costs a header parse: it is how the service stays fast under clients that retry
 * without waiting. A request refused here was not read, so nothing of it is stored.
 */
export class Admission {
  private inflightRequests = 0;
  private inflightBodyBytes = 0;
  /** Bytes of admitted bodies on routes that publish (a superset of what they have handed to the bus). */
  private inflightPublishBytes = 0;
  /** Admitted requests on routes that publish, not yet answered. */
  private inflightPublishRequests = 0;
  private bus: PressureGauge | null = null;

  constructor(private readonly limits: Pick<RequestLimits, 'maxInflightBodyBytes' | 'maxInflightRequests'>) {}

  /** The bus the publishing routes write to (registered by the gateway's routes). */
  watchBus(bus: PressureGauge): void {
    this.bus = bus;
  }

  /** Admitted requests on routes that publish, not yet answered (ack-after-insert's group-commit window waits for those not yet published). */
  publishRequestsInFlight(): number {
    return this.inflightPublishRequests;
  }

  /** Counts for /metrics and tests. */
  snapshot(): { requests: number; bodyBytes: number; publishBytes: number } {
    return { requests: this.inflightRequests, bodyBytes: this.inflightBodyBytes, publishBytes: this.inflightPublishBytes };
  }

  /** Throws the 503 for a request that must be refused; otherwise holds its share until `release`. */
  admit(declaredBytes: number, publishes: boolean): () => void {
    const refuse = (reason: string, label: string, retryAfter: number): never => {
      metrics.admissionRefused.inc({ reason: label });
      // The unread body is drained or its connection closed by the error handler (refused-body.ts).
      throw new ApiError(503, `${reason}; not stored, retry after ${retryAfter}s`, {
        headers: { 'Retry-After': String(retryAfter) },
        label,
      });
    };
    if (this.inflightRequests >= this.limits.maxInflightRequests) {
      refuse(`server busy: ${this.inflightRequests} requests in flight`, 'requests', 1);
    }
    // One body alone is always admitted (the body limit bounds it), so no request size is refused for ever.
    if (this.inflightBodyBytes > 0 && this.inflightBodyBytes + declaredBytes > this.limits.maxInflightBodyBytes) {
      refuse(`server busy: ${this.inflightBodyBytes} bytes of request bodies in flight`, 'body_bytes', 1);
    }
    const bus = publishes ? this.bus : null;
    if (bus) {
      const p = bus.pressure();
      if (p.down) refuse(`ingest unavailable (${p.down})`, 'bus_down', 5);
      if (p.behind) refuse(`ingest paced (${p.behind})`, 'writer_lag', 1);
      const held = Math.max(this.inflightPublishBytes, p.pendingBytes);
      if (held > 0 && held + declaredBytes > p.maxPendingBytes) refuse(`ingest queue full (${held} bytes in flight)`, 'bus_full', 1);
    }
    this.inflightRequests++;
    this.inflightBodyBytes += declaredBytes;
    if (bus) {
      this.inflightPublishBytes += declaredBytes;
      this.inflightPublishRequests++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inflightRequests--;
      this.inflightBodyBytes -= declaredBytes;
      if (bus) {
        this.inflightPublishBytes -= declaredBytes;
        this.inflightPublishRequests--;
      }
    };
  }
}

/** The bytes a request says its body has: Content-Length, an estimate when chunked, else 0. */
export function declaredBodyBytes(request: FastifyRequest): number {
  const length = request.headers['content-length'];
  if (length !== undefined) {
    const n = Number(length);
    return Number.isFinite(n) && n > 0 ? n : 0;
  }
  return request.headers['transfer-encoding'] ? CHUNKED_BODY_ESTIMATE : 0;
}

/** Installs the admission check as the first onRequest hook of every route but the probes. */
export function installAdmission(app: FastifyInstance, limits: RequestLimits): Admission {
  const admission = new Admission(limits);
  app.decorate('weftAdmission', admission);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions.config;
    if (config?.probe) return;
    const release = admission.admit(declaredBodyBytes(request), config?.publishes === true);
    // 'close' comes after 'finish' and also when the client goes away first.
    reply.raw.once('close', release);
  });
  return admission;
}
