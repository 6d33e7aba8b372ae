import { callEndPart, callStartPart, type CallIngest } from '@weft/ingest';
import { microsToIso, nowMicros, type ApiError, type Caller } from '@weft/core';
import type { RouteContext } from '@weft/http';
import type { CallPartRow } from '@weft/store';
import { errorMessage } from './openai-errors';

/**
 * A completion recorded as a call, through the bus like any other call (CallIngest):
 * op name, inputs, output, `summary.usage` keyed by model name, exception.
 */
export class LlmCall {
  private startPublished = false;
  private ended = false;

  private constructor(
    private readonly ingest: CallIngest,
    readonly projectId: string,
    readonly id: string,
    readonly traceId: string,
    private readonly startRow: CallPartRow | null,
  ) {}

  /** A call whose start is already stored (a run taken up after a restart): only its end is left to write. */
  static existing(ingest: CallIngest, c: { projectId: string; id: string; traceId: string }): LlmCall {
    const call = new LlmCall(ingest, c.projectId, c.id, c.traceId, null);
    call.startPublished = true;
    return call;
  }

  static begin(
    ingest: CallIngest,
    c: {
      projectId: string;
      caller: Caller;
      opName: string;
      inputs: Record<string, unknown>;
      traceId?: string | null;
      parentId?: string | null;
      attributes?: Record<string, unknown>;
      displayName?: string | null;
    },
  ): LlmCall {
    const { row, id, trace_id } = callStartPart(
      {
        project_id: c.projectId,
        op_name: c.opName,
        started_at: microsToIso(nowMicros()),
        attributes: c.attributes ?? {},
        inputs: c.inputs,
        ...(c.displayName ? { display_name: c.displayName } : {}),
        trace_id: c.traceId ?? null,
        parent_id: c.parentId ?? null,
      },
      c.caller,
      nowMicros(),
      ingest.maxValueBytes,
    );
    return new LlmCall(ingest, c.projectId, id, trace_id, row);
  }

  /** Makes the call visible while it runs (streams); without it, start and end go together. */
  async publishStart(): Promise<void> {
    if (this.startPublished || !this.startRow) return;
    await this.ingest.publish([this.startRow]);
    this.startPublished = true;
  }

  async end(r: { output: unknown; model?: string; usage?: unknown; exception?: string | null }): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const summary: Record<string, unknown> = {};
    // One request per recorded call, as the OTLP-derived usage counts it (costs read `requests`).
    if (r.model && r.usage && typeof r.usage === 'object') summary.usage = { [r.model]: { ...r.usage, requests: 1 } };
    const endRow = callEndPart(
      {
        project_id: this.projectId,
        id: this.id,
        ended_at: microsToIso(nowMicros()),
        output: r.output,
        summary,
        exception: r.exception ?? null,
      },
      nowMicros(),
      this.ingest.maxValueBytes,
    );
    await this.ingest.publish(this.startPublished || !this.startRow ? [endRow] : [this.startRow, endRow]);
  }
}

/** Removes null/undefined members (the reference records `inputs.model_dump(exclude_none=True)`). */
export function withoutNulls(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

/**
 * A request whose upstream failed before anything was sent: its call (when traced) ends with the
 * error, which is answered with its status; when the client itself went away (`err` null) there
 * is nothing left to answer.
 */
export async function failedBeforeSending(
  ctx: RouteContext,
  call: LlmCall | null,
  model: string,
  err: ApiError | null,
): Promise<undefined> {
  await call?.end({ output: null, model, exception: err ? errorMessage(err) : 'the client went away' });
  if (err) throw err;
  ctx.reply.hijack();
  return undefined;
}
