import { z } from 'zod';
import { UndecodableMessageError, type BusMessage, type EnvelopeCodec } from '@weft/bus';
import { clickHouseToMicros, ENTRANCES, type Entrance } from '@weft/core';
import {
  CALL_PART_COLUMNS,
  callPartRowBinaryEnd,
  callPartRowBinaryFacts,
  type CallPartFacts,
  callPartRowSchema,
  callPartTsvLineProblem,
  decodeCallPartRowBinary,
  encodeCallPartsRowBinary,
  unescapeTsvField,
  type CallPartRow,
  type EncodedCallParts,
} from '@weft/store';

/**
 * The versioned envelope of a call part on the bus.
 * - Version 1 carries one call_parts row as JSON: what publishers build, what the in-process
 *   bus hands the writer, and what older gateways wrote to Kafka (still read).
 * - Version 4 is the row in RowBinary, the bytes the insert is made of (call-part-rowbinary.ts
 *   in @weft/store): the gateway encodes it once, the writer concatenates message values into the
 *   insert's body (no JSON parse, no validation of every field in JavaScript, no re-encoding). On
 *   Kafka and in the local ingest log it is the byte 0x04 followed by one row, or by the rows of
 *   one publish for one partition (one record; the writer splits it back into parts).
 * - Versions 2 (0x02, one TabSeparated line) and 3 (0x03, several) are what gateways wrote
 *   before version 4: still read and inserted as TabSeparated, so a topic or a local log written
 *   by an older version is stored after an upgrade. Upgrade writers before gateways: a writer
 *   older than version 4 dead-letters what it cannot decode.
 * - Version 5 is version 4 with the entrance the parts came in by (one byte after 0x05: HTTP
 *   calls, OTLP/HTTP, OTLP/gRPC, inference), so the writer counts what it stores per entrance
 *   (libs/core delivery.ts). A writer older than version 5 dead-letters it: upgrade writers first.
 * Consumers dead-letter what does not decode.
 */
export const callPartEnvelopeSchema = z.object({
  v: z.literal(1),
  kind: z.literal('call_part'),
  row: callPartRowSchema,
});

/** A part as bytes ready for the insert (versions 2 and 4): it is its own EncodedCallParts. */
type EncodedEnvelope<V, F> = { v: V; kind: 'call_part'; format: F; bytes: Uint8Array };

/** Where the part came in (absent: unknown, e.g. written before version 5); travels as version 5. */
type WithEntrance = { entrance?: Entrance };

export type CallPartEnvelope =
  | (z.infer<typeof callPartEnvelopeSchema> & WithEntrance)
  | EncodedEnvelope<2, 'TabSeparated'>
  | (EncodedEnvelope<4, 'RowBinary'> & WithEntrance);

/** A call part's bus key, its project and call id: a call's start and end share a partition and an order. */
export const callPartKey = (row: Pick<CallPartRow, 'project_id' | 'id'>): string => `${row.project_id}/${row.id}`;

/** A call part as a message, keyed by callPartKey. */
export function callPartMessage(row: CallPartRow): BusMessage<CallPartEnvelope> {
  return { key: callPartKey(row), value: { v: 1, kind: 'call_part', row } };
}

/** A call part as a message that names the entrance it came in by. */
export function enteredCallPartMessage(row: CallPartRow, entrance: Entrance): BusMessage<CallPartEnvelope> {
  return { key: callPartKey(row), value: { v: 1, kind: 'call_part', row, entrance } };
}

/** The project of a call part's bus key (`<entity>/<project>/<call id>`: a call id holds no `/`). */
export const projectOfCallPartKey = (key: string): string => key.slice(0, key.lastIndexOf('/'));

/**
 * Parts already encoded (RowBinary rows one after another in `bytes`, row i ending at `ends[i]`,
 * keyed by `keys[i]`) as messages: each value a view of `bytes`, nothing copied.
 */
export function encodedCallPartMessages(
  bytes: Uint8Array,
  ends: readonly number[],
  keys: readonly string[],
  entrance?: Entrance,
): BusMessage<CallPartEnvelope>[] {
  const messages: BusMessage<CallPartEnvelope>[] = [];
  let from = 0;
  for (let i = 0; i < ends.length; i++) {
    const part = bytes.subarray(from, ends[i]);
    messages.push({
      key: keys[i]!,
      value: entrance
        ? { v: 4, kind: 'call_part', format: 'RowBinary', bytes: part, entrance }
        : { v: 4, kind: 'call_part', format: 'RowBinary', bytes: part },
    });
    from = ends[i]!;
  }
  return messages;
}

/** What the writer inserts for an envelope: the row, or its bytes already encoded. */
export function callPartInsertable(envelope: CallPartEnvelope): CallPartRow | EncodedCallParts {
  return envelope.v === 1 ? envelope.row : envelope;
}

/** Project, call id and which halves of the call a part holds (a whole-call part both), of any version (tests, diagnostics). */
export function callPartIdentity(envelope: CallPartEnvelope): { project_id: string; id: string; start: boolean; end: boolean } {
  if (envelope.v !== 2) {
    const row = envelope.v === 1 ? envelope.row : decodeCallPartRowBinary(envelope.bytes);
    return { project_id: row.project_id, id: row.id, start: row.started_at != null, end: row.ended_at != null };
  }
  const fields = Buffer.from(envelope.bytes).toString('utf8').split('\t');
  return {
    project_id: unescapeTsvField(fields[0]!)!,
    id: unescapeTsvField(fields[1]!)!,
    start: fields[callPartColumn('started_at')] !== '\\N',
    end: fields[callPartColumn('ended_at')] !== '\\N',
  };
}

const callPartColumn = (name: keyof CallPartRow) => CALL_PART_COLUMNS.indexOf(name);

/** A part's project, halves and acceptance time (µs; null for a version-2 part), cheaply: what delivery counting reads of every stored part. */
export function callPartFacts(envelope: CallPartEnvelope): Omit<CallPartFacts, 'createdAtMicros'> & { createdAtMicros: number | null } {
  if (envelope.v === 4) return callPartRowBinaryFacts(envelope.bytes);
  if (envelope.v === 1) {
    const r = envelope.row;
    return {
      project_id: r.project_id,
      started: r.started_at != null,
      ended: r.ended_at != null,
      createdAtMicros: clickHouseToMicros(r.created_at),
    };
  }
  const { project_id, start, end } = callPartIdentity(envelope);
  return { project_id, started: start, ended: end, createdAtMicros: null };
}

/** The call halves (a start, an end) a part holds: a rename or a deletion mark holds none. */
export const callHalves = (facts: { started: boolean; ended: boolean }): number => (facts.started ? 1 : 0) + (facts.ended ? 1 : 0);

/**
 * About the bytes a call part takes on the wire (UTF-16 units of its text members plus a little
 * per field), without encoding it.
 */
export function envelopeBytes(envelope: CallPartEnvelope): number {
  if (envelope.v !== 1) return envelope.bytes.length;
  let n = 64;
  const row = envelope.row as unknown as Record<string, unknown>;
  for (const k in row) {
    const v = row[k];
    if (typeof v === 'string') n += v.length + 8;
    else if (Array.isArray(v)) for (const x of v) n += String(x).length + 4;
    else n += 8;
  }
  return n;
}

/** The first byte of a version-2 value (a version-1 value is JSON, so it starts with `{`). */
const V2 = 0x02;
/** The first byte of a version-3 value: several version-2 lines in one Kafka record. */
const V3 = 0x03;
/** The first byte of a version-4 value: one or more RowBinary rows. */
const V4 = Buffer.of(0x04);
/** The first byte of a version-5 value: the entrance's byte (ENTRANCE_CODES), then RowBinary rows. */
const V5 = 0x05;
/** An entrance's byte in a version-5 value: its place in ENTRANCES, from 1. */
const entranceCode = (e: Entrance): number => ENTRANCES.indexOf(e) + 1;

/** The header of a RowBinary value: version 5 with the entrance when the parts carry one, else version 4. */
function rowBinaryHeader(entrance: Entrance | undefined): Buffer {
  return entrance ? Buffer.of(V5, entranceCode(entrance)) : V4;
}

/** The entrance of a record's parts: the first's (a record holds one publish, which has one entrance). */
const entranceOf = (envelopes: readonly CallPartEnvelope[]): Entrance | undefined =>
  envelopes[0]?.v === 2 ? undefined : envelopes[0]?.entrance;

/**
 * The call-parts topic's codec: parts are written as version 5, or 4 when they carry no
 * entrance (one record for the parts of one publish for one partition: the version byte, the
 * entrance's, then their rows); reads every version.
 */
export const callPartCodec: EnvelopeCodec<CallPartEnvelope> = {
  sizeOf: envelopeBytes,
  encode(envelope) {
    if (envelope.v === 1) return encodeCallPartsRowBinary([envelope.row], rowBinaryHeader(envelope.entrance));
    if (envelope.v === 2) return Buffer.concat([Buffer.of(V2), envelope.bytes]);
    return Buffer.concat([rowBinaryHeader(envelope.entrance), envelope.bytes]);
  },
  encodeMany(envelopes) {
    const header = rowBinaryHeader(entranceOf(envelopes));
    // Rows (what publishers build) encoded together; parts already encoded are copied.
    if (envelopes.every((e) => e.v === 1))
      return encodeCallPartsRowBinary(
        envelopes.map((e) => e.row),
        header,
      );
    if (envelopes.every((e) => e.v === 2)) return Buffer.concat([Buffer.of(V3), ...envelopes.map((e) => e.bytes)]);
    // Only a dead letter re-encodes decoded parts, one at a time: a record never mixes formats.
    if (envelopes.some((e) => e.v === 2)) throw new Error('call parts of TabSeparated (version 2) and RowBinary in one record');
    return Buffer.concat([header, ...envelopes.map((e) => (e.v === 1 ? encodeCallPartsRowBinary([e.row]) : e.bytes))]);
  },
  decode(bytes) {
    const parts = callPartCodec.decodeMany!(bytes);
    if (parts.length > 1) throw new UndecodableMessageError(`a version-${bytes![0]} value holds several parts (decodeMany reads it)`);
    return parts[0]!;
  },
  decodeMany(bytes) {
    if (!bytes || bytes.length === 0) throw new UndecodableMessageError('empty message value');
    switch (bytes[0]) {
      case V5: {
        const entrance = ENTRANCES[(bytes[1] ?? 0) - 1];
        if (!entrance) throw new UndecodableMessageError(`invalid envelope (version 5): unknown entrance ${bytes[1] ?? '(none)'}`);
        return decodeRows(bytes, 2, entrance);
      }
      case V4[0]:
        return decodeRows(bytes, 1);
      case V3:
        return decodeLines(bytes);
      case V2:
        return [decodeLine(bytes.subarray(1), 'version 2')];
      default:
        return [decodeV1(bytes)];
    }
  },
};

/** A version-4 or -5 value (its rows from `from`): each row's bytes, found by walking the columns' layout. */
function decodeRows(bytes: Buffer, from: number, entrance?: Entrance): CallPartEnvelope[] {
  const parts: CallPartEnvelope[] = [];
  const version = entrance ? 5 : 4;
  for (let at = from; at < bytes.length;) {
    const end = callPartRowBinaryEnd(bytes, at);
    if (typeof end === 'string')
      throw new UndecodableMessageError(`invalid envelope (version ${version}, part ${parts.length + 1}): ${end}`);
    const part = bytes.subarray(at, end);
    parts.push(
      entrance
        ? { v: 4, kind: 'call_part', format: 'RowBinary', bytes: part, entrance }
        : { v: 4, kind: 'call_part', format: 'RowBinary', bytes: part },
    );
    at = end;
  }
  if (parts.length === 0) throw new UndecodableMessageError(`invalid envelope (version ${version}): no part`);
  return parts;
}

/** A version-3 value: its lines, each ending at its newline (a newline inside a field is escaped as `\n`). */
function decodeLines(bytes: Buffer): CallPartEnvelope[] {
  const parts: CallPartEnvelope[] = [];
  for (let at = 1; at < bytes.length;) {
    const end = bytes.indexOf(NEWLINE, at);
    const label = `version 3, part ${parts.length + 1}`;
    if (end < 0) throw new UndecodableMessageError(`invalid envelope (${label}): not a line (no final newline)`);
    parts.push(decodeLine(bytes.subarray(at, end + 1), label));
    at = end + 1;
  }
  if (parts.length === 0) throw new UndecodableMessageError('invalid envelope (version 3): no part');
  return parts;
}

const NEWLINE = 0x0a;

/** One TabSeparated line as an envelope; `label` names the version (and part) in the error. */
function decodeLine(line: Uint8Array, label: string): CallPartEnvelope {
  const problem = callPartTsvLineProblem(line);
  if (problem) throw new UndecodableMessageError(`invalid envelope (${label}): ${problem}`);
  return { v: 2, kind: 'call_part', format: 'TabSeparated', bytes: line };
}

function decodeV1(bytes: Buffer): CallPartEnvelope {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new UndecodableMessageError(`not JSON: ${(e as Error).message}`);
  }
  const parsed = callPartEnvelopeSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || '(envelope)';
    throw new UndecodableMessageError(`invalid envelope at ${field}: ${issue.message}`);
  }
  return parsed.data;
}
