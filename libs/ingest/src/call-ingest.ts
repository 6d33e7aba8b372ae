import type { CallEndBody, CallStartBody, CompletedCall } from '@weft/api';
import { TOPICS, type Bus, type BusMessage } from '@weft/bus';
import { metrics, nowMicros, type Caller } from '@weft/core';
import { wholeCallPart, type CallPartRow } from '@weft/store';
import { acknowledgedHalves, callEndPart, callStartPart } from './call-batch';
import { coalesceCallParts } from './coalesce';
import { callPartMessage, type CallPartEnvelope } from './envelope';

/**
 * Turns call starts and ends into call parts and publishes them; resolves once durable. Each
 * write returns its publish rather than awaiting it, so no suspended frame keeps the call's body
 * or rows alive while the bus acknowledges (every scavenge meanwhile would copy them).
 */
export class CallIngest {
  /** Call values over this many bytes of JSON are stored truncated (WEFT_MAX_VALUE_BYTES; 0: no limit). */
  readonly maxValueBytes: number;

  constructor(
    private readonly bus: Bus<CallPartEnvelope>,
    opts: { maxValueBytes?: number } = {},
  ) {
    this.maxValueBytes = opts.maxValueBytes ?? 0;
  }

  /** Publishes the parts (a call's start and end in the same batch as one part); resolves once durable. */
  publish(rows: CallPartRow[]): Promise<void> {
    const count = acknowledgedHalves(rows);
    return this.bus
      .publish(TOPICS.callParts, coalesceCallParts(rows).map(callPartMessage))
      .then(() => void metrics.callPartsAccepted.inc(count));
  }

  /**
   * Parts encoded elsewhere (encodedCallPartMessages: OTLP spans and call batches converted off
   * the serving thread), `acknowledged` call halves in all; resolves once durable.
   */
  publishEncoded(messages: BusMessage<CallPartEnvelope>[], acknowledged: number): Promise<void> {
    return this.bus.publish(TOPICS.callParts, messages).then(() => void metrics.callPartsAccepted.inc(acknowledged));
  }

  /**
   * Finished calls (/v2/…/calls/complete): each becomes one whole-call part, all in one
   * publish, so the batch is acknowledged only once every call is durable.
   */
  async complete(batch: CompletedCall[], caller: Caller): Promise<Record<string, never>> {
    const at = nowMicros();
    const rows = batch.map((c) =>
      wholeCallPart(
        callStartPart(c, caller, at, this.maxValueBytes).row,
        callEndPart(
          {
            project_id: c.project_id,
            id: c.id,
            ended_at: c.ended_at,
            summary: c.summary,
            exception: c.exception,
            output: c.output,
            svc_run_step_end: c.svc_run_step_end,
          },
          at,
          this.maxValueBytes,
        ),
      ),
    );
    return rows.length > 0 ? this.publish(rows).then(() => ({})) : {};
  }

  async start(start: CallStartBody, caller: Caller): Promise<{ id: string; trace_id: string }> {
    const { row, id, trace_id } = callStartPart(start, caller, nowMicros(), this.maxValueBytes);
    return this.publish([row]).then(() => ({ id, trace_id }));
  }

  async end(end: CallEndBody): Promise<Record<string, never>> {
    return this.publish([callEndPart(end, nowMicros(), this.maxValueBytes)]).then(() => ({}));
  }
}
