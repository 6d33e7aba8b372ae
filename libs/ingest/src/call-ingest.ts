import type { CallEndBody, CallStartBody, CompletedCall } from '@weft/api';
import { TOPICS, type Bus } from '@weft/bus';
import { delivery, metrics, nowMicros, type Caller, type Entrance } from '@weft/core';
import { CallPartRowBinaryEncoder, wholeCallPart, type CallPartRow } from '@weft/store';
import { callEndPart, callStartPart, encodeCallPartRows, type EncodedCallPartRows, type EndTraceIds } from './call-batch';
import { callPartKey, encodedCallPartMessages, projectOfCallPartKey, type CallPartEnvelope } from './envelope';
import type { IngestPolicies, IngestSettings } from './ingest-settings';
import { redactCallParts } from './redaction';
import { DroppedCalls, traceKept } from './sampling';

const NO_POLICIES: IngestPolicies = { redact: new Set(), sampling: new Map() };

/** Calls dropped by sampling, remembered for their later ends: one memory per process, whatever the entrance. */
const dropped = new DroppedCalls();

/** One publish's parts as sampling and counting see them. */
interface PartFacts {
  key: string;
  project: string;
  halves: number;
  /** The part holds its call's start (a start decides; an end follows it). */
  started: boolean;
  traceId: string | null;
}

/**
 * Turns call starts and ends into call parts and publishes them; resolves once durable. Each
 * write returns its publish rather than awaiting it, so no suspended frame keeps the call's body
 * or rows alive while the bus acknowledges (every scavenge meanwhile would copy them).
 *
 * On the way, a project's ingest policies apply (IngestSettings: redaction of sensitive values,
 * sampling by trace id), and what was accepted and sampled out is counted per project at this
 * entrance (libs/core delivery.ts).
 */
export class CallIngest {
  /** Call values over this many bytes of JSON are stored truncated (WEFT_MAX_VALUE_BYTES; 0: no limit). */
  readonly maxValueBytes: number;
  /** Where the calls published through this come in (delivery counts, the parts' envelope). */
  readonly entrance: Entrance;
  private readonly settings: IngestSettings | null;
  private readonly encoder = new CallPartRowBinaryEncoder();

  constructor(
    private readonly bus: Bus<CallPartEnvelope>,
    opts: { maxValueBytes?: number; entrance?: Entrance; settings?: IngestSettings } = {},
  ) {
    this.maxValueBytes = opts.maxValueBytes ?? 0;
    this.entrance = opts.entrance ?? 'calls';
    this.settings = opts.settings ?? null;
  }

  /** The policies in force (read once at the first use: a call is never stored before its project's redaction is known). */
  policies(): IngestPolicies | Promise<IngestPolicies> {
    const s = this.settings;
    if (!s) return NO_POLICIES;
    if (s.isReady) return s.current();
    return s.ready().then(() => s.current());
  }

  /** The projects whose new calls are redacted now: what a worker thread converting a request needs to know. */
  async redactedProjects(): Promise<string[]> {
    return [...(await this.policies()).redact];
  }

  /** Publishes the parts (a call's start and end in the same batch as one part); resolves once durable. */
  publish(rows: CallPartRow[], endTraceIds?: EndTraceIds): Promise<void> {
    const policies = this.policies();
    if (policies instanceof Promise) return policies.then(() => this.publish(rows, endTraceIds));
    const encoded = encodeCallPartRows(redactCallParts(rows, policies.redact), endTraceIds, this.encoder);
    return this.publishSampled(encoded, policies);
  }

  /**
   * Parts encoded elsewhere (encodeCallPartRows: OTLP spans and call batches converted off the
   * serving thread, redacted there as redactedProjects() said); resolves once durable.
   */
  publishEncoded(encoded: EncodedCallPartRows): Promise<void> {
    const policies = this.policies();
    if (policies instanceof Promise) return policies.then(() => this.publishEncoded(encoded));
    return this.publishSampled(encoded, policies);
  }

  /**
   * The parts sampling keeps, published; every part counted (accepted, and sampled out) once the
   * publish is durable. Counted up front: the count waiting for the acknowledgement holds a few
   * numbers per project, not the parts.
   */
  private publishSampled(encoded: EncodedCallPartRows, policies: IngestPolicies): Promise<void> {
    const tally = new Map<string, { accepted: number; dropped: number; wouldDrop: number }>();
    const keep: boolean[] | null = policies.sampling.size > 0 ? [] : null;
    for (let i = 0; i < encoded.keys.length; i++) {
      const key = encoded.keys[i]!;
      const halves = encoded.halves[i]!;
      const project = projectOfCallPartKey(key);
      const decision = keep
        ? decide({ key, project, halves, started: encoded.starts[i]!, traceId: encoded.traceIds[i]! }, policies)
        : 'keep';
      keep?.push(decision !== 'drop');
      if (halves === 0) continue;
      let t = tally.get(project);
      if (!t) tally.set(project, (t = { accepted: 0, dropped: 0, wouldDrop: 0 }));
      t.accepted += halves;
      if (decision === 'drop') t.dropped += halves;
      else if (decision === 'would_drop') t.wouldDrop += halves;
    }
    let messages = encodedCallPartMessages(encoded.bytes, encoded.ends, encoded.keys, this.entrance);
    if (keep) messages = messages.filter((_, i) => keep[i]);
    const acknowledged = encoded.acknowledged;
    const entrance = this.entrance;
    const count = () => {
      metrics.callPartsAccepted.inc(acknowledged);
      for (const [project, t] of tally) {
        delivery.accepted(project, entrance, t.accepted);
        delivery.sampledOut(project, entrance, t.dropped, false);
        delivery.sampledOut(project, entrance, t.wouldDrop, true);
      }
    };
    if (messages.length === 0) {
      count();
      return Promise.resolve();
    }
    return this.bus.publish(TOPICS.callParts, messages).then(count);
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
    const row = callEndPart(end, nowMicros(), this.maxValueBytes);
    return this.publish([row], end.trace_id ? new Map([[callPartKey(row), end.trace_id]]) : undefined).then(() => ({}));
  }
}

type Decision = 'keep' | 'drop' | 'would_drop';

/**
 * A part's fate under its project's sampling: a start (or whole call) by its trace id — a
 * dropped one is remembered, so its end follows it — an end by its start's fate if remembered,
 * else by the trace id it named, else kept.
 */
function decide(f: PartFacts, policies: IngestPolicies): Decision {
  const setting = policies.sampling.get(f.project);
  if (!setting || f.halves === 0) return 'keep';
  const out: Decision = setting.dry_run ? 'would_drop' : 'drop';
  if (f.started) {
    if (f.traceId === null || traceKept(f.traceId, setting.sample_rate)) return 'keep';
    dropped.add(f.key);
    return out;
  }
  if (dropped.has(f.key)) return out;
  return f.traceId !== null && !traceKept(f.traceId, setting.sample_rate) ? out : 'keep';
}
