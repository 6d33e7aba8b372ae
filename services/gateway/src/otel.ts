import { badRequest, forbidden, nowMicros, type Caller } from '@weft/core';
import { convertExportRequest, OtlpRequestError, partialSuccessOf, type PartialSuccess } from '@weft/otlp';
import { endPart, startPart, type CallPartRow } from '@weft/store';
import type { CallIngest } from '@weft/ingest';

/**
 * OTLP spans into the call pipeline: each accepted span becomes a start part and an end
 * part, published in one batch; resolves once the bus holds them durably.
 */
export class OtelIngest {
  constructor(private readonly calls: CallIngest) {}

  /**
   * `traces` is a decoded ExportTraceServiceRequest (either encoding). `fieldPrefix` names
   * where it sat in the request, for 400s (`traces.` in the /otel/v1/trace body).
   */
  async ingest(
    traces: unknown,
    opts: { projectId: string | null; runId?: string | null; fieldPrefix?: string },
    caller: Caller,
  ): Promise<PartialSuccess | null> {
    let conversion;
    try {
      conversion = convertExportRequest(traces, { projectId: opts.projectId, runId: opts.runId ?? null });
    } catch (e) {
      if (e instanceof OtlpRequestError) {
        const field = e.field === 'project_id' || !opts.fieldPrefix ? e.field : opts.fieldPrefix + e.field;
        throw badRequest(e.message, field);
      }
      throw e;
    }
    // Spans may name their project in resource attributes: check every project they land in.
    if (!caller.isAdmin) {
      for (const project of new Set(conversion.calls.map((c) => c.start.project_id))) {
        const entity = project.slice(0, project.indexOf('/'));
        if (!caller.entities.includes(entity)) throw forbidden(`no access to project ${project}`);
      }
    }
    const at = nowMicros();
    const rows: CallPartRow[] = [];
    for (const c of conversion.calls) rows.push(startPart(c.start, caller.userId, at), endPart(c.end, at));
    if (rows.length > 0) await this.calls.publish(rows);
    return partialSuccessOf(conversion);
  }
}
