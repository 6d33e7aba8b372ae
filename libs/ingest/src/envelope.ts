import { UndecodableMessageError, type BusMessage, type EnvelopeCodec } from '@weft/bus';
import { ENTRANCES, type Entrance } from '@weft/core';
import {
  CallPartRowBinaryEncoder,
  callPartRowBinaryEnd,
  callPartRowBinaryFacts,
  decodeCallPartRowBinary,
  type CallPartFacts,
  type CallPartRow,
  type EncodedCallParts,
} from '@weft/store';

/**
 * A call part on the bus. In memory it is a row (`v: 1`, what publishers build; the in-process
 * bus hands it to the writer as it is) or the row's RowBinary bytes (`v: 4`, the bytes the insert
 * is made of: call-part-rowbinary.ts in @weft/store), each with the entrance it came in by. The
 * `v` names the in-memory form, not a wire version.
 *
 * On Kafka and in the local ingest log a value is envelope version 5, the 1.0 envelope: the byte
 * 0x05, the entrance's byte (its place in ENTRANCES from 1: HTTP calls, OTLP/HTTP, OTLP/gRPC,
 * inference; 0 when not known), then one RowBinary row, or the rows of one publish for one
 * partition (the writer splits them back into parts and concatenates their bytes into the
 * insert: no JSON, no re-encoding). The entrance lets the writer count what it stores per
 * entrance (libs/core delivery.ts).
 *
 * Compatibility (docs/operations.md, Upgrades): from 1.0 on, an envelope version is read for one
 * minor release after a newer one is written. Versions 1–4 are pre-1.0 (JSON, TabSeparated lines,
 * RowBinary without the entrance) and are not read: such a value is dead-lettered with a reason
 * naming its version, as is anything else that does not decode.
 */
export type CallPartEnvelope = (RowEnvelope | BytesEnvelope) & { entrance?: Entrance };
type RowEnvelope = { v: 1; kind: 'call_part'; row: CallPartRow };
/** A part as bytes ready for the insert: it is its own EncodedCallParts. */
type BytesEnvelope = { v: 4; kind: 'call_part'; format: 'RowBinary'; bytes: Uint8Array };

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

/** Project, call id and which halves of the call a part holds (a whole-call part both) (tests, diagnostics). */
export function callPartIdentity(envelope: CallPartEnvelope): { project_id: string; id: string; start: boolean; end: boolean } {
  const row = envelope.v === 1 ? envelope.row : decodeCallPartRowBinary(envelope.bytes);
  return { project_id: row.project_id, id: row.id, start: row.started_at != null, end: row.ended_at != null };
}

/** A part's project, halves and acceptance time (µs), cheaply: what delivery counting reads of every stored part. */
export function callPartFacts(envelope: CallPartEnvelope): CallPartFacts {
  if (envelope.v === 4) return callPartRowBinaryFacts(envelope.bytes);
  const r = envelope.row;
  return { project_id: r.project_id, started: r.started_at != null, ended: r.ended_at != null, createdAtMicros: r.created_at };
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

/** The first byte of a value: the envelope version (the 1.0 envelope is version 5). */
const V5 = 0x05;
/** An entrance's byte in a version-5 value: its place in ENTRANCES, from 1; 0 for a part whose entrance is not known. */
const entranceCode = (e: Entrance | undefined): number => (e ? ENTRANCES.indexOf(e) + 1 : 0);

/** The header of a value: the version, then the entrance's byte. */
const header = (entrance: Entrance | undefined): Buffer => Buffer.of(V5, entranceCode(entrance));

/** The entrance of a record's parts: the first's (a record holds one publish, which has one entrance). */
const entranceOf = (envelopes: readonly CallPartEnvelope[]): Entrance | undefined => envelopes[0]?.entrance;

/**
 * The call-parts topic's codec: parts are written as version 5 (one record for the parts of one
 * publish for one partition: the version byte, the entrance's, then their rows); only version 5
 * is read.
 */
export const callPartCodec: EnvelopeCodec<CallPartEnvelope> = callPartCodecWith(new CallPartRowBinaryEncoder());

function callPartCodecWith(encoder: CallPartRowBinaryEncoder): EnvelopeCodec<CallPartEnvelope> {
  const codec: EnvelopeCodec<CallPartEnvelope> = {
    sizeOf: envelopeBytes,
    scopeOfKey: (key) => (key.includes('/') ? projectOfCallPartKey(key) : undefined),
    encode(envelope) {
      if (envelope.v === 1) return encoder.encode([envelope.row], header(envelope.entrance));
      return Buffer.concat([header(envelope.entrance), envelope.bytes]);
    },
    encodeMany(envelopes) {
      const head = header(entranceOf(envelopes));
      // Rows (what publishers build) encoded together; parts already encoded are copied.
      if (envelopes.every((e) => e.v === 1))
        return encoder.encode(
          envelopes.map((e) => e.row),
          head,
        );
      return Buffer.concat([head, ...envelopes.map((e) => (e.v === 1 ? encoder.encode([e.row]) : e.bytes))]);
    },
    decode(bytes) {
      const parts = codec.decodeMany!(bytes);
      if (parts.length > 1) throw new UndecodableMessageError(`a version-${bytes![0]} value holds several parts (decodeMany reads it)`);
      return parts[0]!;
    },
    decodeMany(bytes) {
      if (!bytes || bytes.length === 0) throw new UndecodableMessageError('empty message value');
      if (bytes[0] !== V5) throw new UndecodableMessageError(unreadVersion(bytes[0]!));
      const code = bytes[1];
      const entrance = code ? ENTRANCES[code - 1] : undefined;
      if (code === undefined || (code !== 0 && !entrance))
        throw new UndecodableMessageError(`invalid envelope (version 5): unknown entrance ${code ?? '(none)'}`);
      return decodeRows(bytes, 2, entrance);
    },
  };
  return codec;
}

/**
 * Why a value of another first byte is not read: versions 1 (JSON, so `{`) to 4 are what
 * gateways wrote before 1.0 (docs/operations.md, Upgrades); anything else is no envelope.
 */
function unreadVersion(first: number): string {
  const version = first === 0x7b ? 1 : first >= 2 && first <= 4 ? first : null;
  if (version === null)
    return `invalid envelope: a first byte of 0x${first.toString(16).padStart(2, '0')} is no envelope version (version 5 starts with 0x05)`;
  return `envelope version ${version} is not read (written before 1.0; this version reads version 5): drain it with the weft that wrote it`;
}

/** A version-5 value's rows from `from`: each row's bytes, found by walking the columns' layout. */
function decodeRows(bytes: Buffer, from: number, entrance: Entrance | undefined): CallPartEnvelope[] {
  const parts: CallPartEnvelope[] = [];
  for (let at = from; at < bytes.length;) {
    const end = callPartRowBinaryEnd(bytes, at);
    if (typeof end === 'string') throw new UndecodableMessageError(`invalid envelope (version 5, part ${parts.length + 1}): ${end}`);
    const part = bytes.subarray(at, end);
    parts.push(
      entrance
        ? { v: 4, kind: 'call_part', format: 'RowBinary', bytes: part, entrance }
        : { v: 4, kind: 'call_part', format: 'RowBinary', bytes: part },
    );
    at = end;
  }
  if (parts.length === 0) throw new UndecodableMessageError('invalid envelope (version 5): no part');
  return parts;
}
