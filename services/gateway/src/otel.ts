import { badRequest, delivery, forbidden, metrics, nowMicros, withDeliveryProject, type Caller, type Logger } from '@weft/core';
import { partialSuccessOf, type PartialSuccess } from '@weft/otlp';
import { inlineSpanConverter, type CallIngest, type OtlpPayload, type SpanConverter } from '@weft/ingest';

/** Which entrance a batch of spans came through (a metric label). */
export type OtlpTransport = 'http' | 'grpc' | 'trace_endpoint';

/** Rejections logged per request: enough to find each span, bounded so a bad batch cannot flood the log. */
const MAX_LOGGED_REJECTIONS = 20;

/**
 * OTLP spans into the call pipeline: each accepted span becomes a finished call's part
 * (encodeSpanParts, on the serving thread or a worker: @weft/ingest conversions.ts), published in one
 * batch; resolves once the bus holds them durably. No span is lost silently: each rejected one
 * is reported to the client (partial_success or the request's error), logged at warn with its
 * project, trace and span id and reason, and counted in `weft_otlp_spans_rejected_total{reason}`.
 */
export class OtelIngest {
  constructor(
    private readonly calls: CallIngest,
    private readonly log: Logger,
    private readonly spans: SpanConverter = inlineSpanConverter,
  ) {}

  /**
   * `payload` is an ExportTraceServiceRequest in either encoding, or decoded. `fieldPrefix`
   * names where it sat in the request, for 400s (`traces.` in the /otel/v1/trace body).
   */
  async ingest(
    payload: OtlpPayload,
    opts: { projectId: string | null; runId?: string | null; fieldPrefix?: string; transport: OtlpTransport },
    caller: Caller,
  ): Promise<PartialSuccess | null> {
    const transport = opts.transport;
    const parts = await this.spans.convert({
      payload,
      opts: {
        projectId: opts.projectId,
        runId: opts.runId ?? null,
        userId: caller.userId,
        acceptedAtMicros: nowMicros(),
        maxValueBytes: this.calls.maxValueBytes,
        redact: await this.calls.redactedProjects(),
      },
    });
    if (!parts.ok) {
      // Undecodable: the body's own error. Unusable as a whole: logged and counted too.
      if (parts.reason === null) throw badRequest(parts.message, parts.field);
      const field = parts.field === 'project_id' || !opts.fieldPrefix ? parts.field : opts.fieldPrefix + parts.field;
      this.refused(parts.reason, parts.message, transport, opts.projectId, caller);
      throw badRequest(parts.message, field);
    }
    // Spans may name their project in resource attributes: check every project they land in.
    if (!caller.isAdmin) {
      for (const project of parts.projects) {
        const entity = project.slice(0, project.indexOf('/'));
        if (!caller.entities.includes(entity)) {
          this.refused('forbidden', `no access to project ${project}`, transport, project, caller, parts.accepted + parts.rejectedSpans);
          throw withDeliveryProject(forbidden(`no access to project ${project}`), project);
        }
      }
    }
    // Each span is a finished call: its start and its end acknowledged in one part.
    if (parts.keys.length > 0) await this.calls.publishEncoded(parts);
    metrics.otlpSpansAccepted.inc({ transport }, parts.accepted);
    for (const r of parts.rejections) {
      metrics.otlpSpansRejected.inc({ reason: r.reason, transport });
      delivery.spansRejected(r.project ?? opts.projectId, this.calls.entrance, r.reason, 1);
    }
    parts.rejections.slice(0, MAX_LOGGED_REJECTIONS).forEach((r) => {
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
    if (parts.rejections.length > MAX_LOGGED_REJECTIONS) {
      this.log.warn(
        { more: parts.rejections.length - MAX_LOGGED_REJECTIONS, key: caller.keyId, transport },
        'OTLP spans rejected (more in this request)',
      );
    }
    return partialSuccessOf(parts);
  }

  /** A whole request refused: the client gets the error; here it is logged and its spans counted. */
  private refused(reason: string, message: string, transport: OtlpTransport, project: string | null, caller: Caller, spans?: number): void {
    if (spans !== undefined) metrics.otlpSpansRejected.inc({ reason, transport }, spans);
    this.log.warn({ project, reason, error: message, key: caller.keyId, transport }, 'OTLP request refused');
  }
}
