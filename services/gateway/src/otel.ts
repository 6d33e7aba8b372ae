import { badRequest, forbidden, metrics, nowMicros, type Caller, type Logger } from '@weft/core';
import { convertExportRequest, OtlpRequestError, partialSuccessOf, type PartialSuccess } from '@weft/otlp';
import { endPart, startPart, type CallPartRow } from '@weft/store';
import type { CallIngest } from '@weft/ingest';

/** Which entrance a batch of spans came through (a metric label). */
export type OtlpTransport = 'http' | 'grpc' | 'trace_endpoint';

/** Rejections logged per request: enough to find each span, bounded so a bad batch cannot flood the log. */
const MAX_LOGGED_REJECTIONS = 20;

/**
 * OTLP spans into the call pipeline: each accepted span becomes a start part and an end
 * part, published in one batch; resolves once the bus holds them durably. No span is lost
 * silently: each rejected one is reported to the client (partial_success or the request's
 * error), logged at warn with its project, trace and span id and reason, and counted in
 * `weft_otlp_spans_rejected_total{reason}`.
 */
export class OtelIngest {
  constructor(
    private readonly calls: CallIngest,
    private readonly log: Logger,
  ) {}

  /**
   * `traces` is a decoded ExportTraceServiceRequest (either encoding). `fieldPrefix` names
   * where it sat in the request, for 400s (`traces.` in the /otel/v1/trace body).
   */
  async ingest(
    traces: unknown,
    opts: { projectId: string | null; runId?: string | null; fieldPrefix?: string; transport: OtlpTransport },
    caller: Caller,
  ): Promise<PartialSuccess | null> {
    const transport = opts.transport;
    let conversion;
    try {
      conversion = convertExportRequest(traces, { projectId: opts.projectId, runId: opts.runId ?? null });
    } catch (e) {
      if (e instanceof OtlpRequestError) {
        const field = e.field === 'project_id' || !opts.fieldPrefix ? e.field : opts.fieldPrefix + e.field;
        this.refused(e.field === 'project_id' ? 'no_project' : 'invalid_request', e.message, transport, opts.projectId, caller);
        throw badRequest(e.message, field);
      }
      throw e;
    }
    // Spans may name their project in resource attributes: check every project they land in.
    if (!caller.isAdmin) {
      for (const project of new Set(conversion.calls.map((c) => c.start.project_id))) {
        const entity = project.slice(0, project.indexOf('/'));
        if (!caller.entities.includes(entity)) {
          this.refused(
            'forbidden',
            `no access to project ${project}`,
            transport,
            project,
            caller,
            conversion.calls.length + conversion.rejectedSpans,
          );
          throw forbidden(`no access to project ${project}`);
        }
      }
    }
    const at = nowMicros();
    const rows: CallPartRow[] = [];
    for (const c of conversion.calls) rows.push(startPart(c.start, caller.userId, at), endPart(c.end, at));
    if (rows.length > 0) await this.calls.publish(rows);
    metrics.otlpSpansAccepted.inc({ transport }, conversion.calls.length);
    for (const r of conversion.rejections) metrics.otlpSpansRejected.inc({ reason: r.reason, transport });
    conversion.rejections.slice(0, MAX_LOGGED_REJECTIONS).forEach((r) => {
      this.log.warn(
        {
          project: r.project,
          traceId: r.traceId,
          spanId: r.spanId,
          spanName: r.name,
          reason: r.reason,
          error: r.message,
          key: caller.keyId,
          transport,
        },
        'OTLP span rejected',
      );
    });
    if (conversion.rejections.length > MAX_LOGGED_REJECTIONS) {
      this.log.warn(
        { more: conversion.rejections.length - MAX_LOGGED_REJECTIONS, key: caller.keyId, transport },
        'OTLP spans rejected (more in this request)',
      );
    }
    return partialSuccessOf(conversion);
  }

  /** A whole request refused: the client gets the error; here it is logged and its spans counted. */
  private refused(reason: string, message: string, transport: OtlpTransport, project: string | null, caller: Caller, spans?: number): void {
    if (spans !== undefined) metrics.otlpSpansRejected.inc({ reason, transport }, spans);
    this.log.warn({ project, reason, error: message, key: caller.keyId, transport }, 'OTLP request refused');
  }
}
