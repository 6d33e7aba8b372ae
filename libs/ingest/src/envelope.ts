import { z } from 'zod';
import { UndecodableMessageError, type BusMessage, type EnvelopeCodec } from '@weft/bus';
import { callPartRowSchema, callPartTsvLine, callPartTsvLineProblem, unescapeTsvField, type CallPartRow } from '@weft/store';

/**
 * The versioned envelope of a call part on the bus.
 * - Version 1 carries one call_parts row as JSON: what publishers build, what the in-process
 *   bus hands the writer, and what older gateways wrote to Kafka (still read).
 * - Version 2 is the row's TabSeparated line, the bytes the insert is made of: the gateway
 *   encodes it once, the writer concatenates message values into the insert's body (no JSON
 *   parse, no validation of every field in JavaScript, no re-encoding). On Kafka it is the
 *   byte 0x02 followed by the line; the engine validates the fields on insert.
 * Consumers dead-letter what does not decode.
 */
export const callPartEnvelopeSchema = z.object({
  v: z.literal(1),
  kind: z.literal('call_part'),
  row: callPartRowSchema,
});

export type CallPartEnvelope = z.infer<typeof callPartEnvelopeSchema> | { v: 2; kind: 'call_part'; line: Uint8Array };

/** A call part keyed by project and call id: a call's start and end share a partition and an order. */
export function callPartMessage(row: CallPartRow): BusMessage<CallPartEnvelope> {
  return { key: `${row.project_id}/${row.id}`, value: { v: 1, kind: 'call_part', row } };
}

/** What the writer inserts for an envelope: the row, or its line already encoded. */
export function callPartInsertable(envelope: CallPartEnvelope): CallPartRow | Uint8Array {
  return envelope.v === 1 ? envelope.row : envelope.line;
}

/** Project, call id and which halves of the call a part holds (a whole-call part both), of either version (tests, diagnostics). */
export function callPartIdentity(envelope: CallPartEnvelope): { project_id: string; id: string; start: boolean; end: boolean } {
  if (envelope.v === 1) {
    const { row } = envelope;
    return { project_id: row.project_id, id: row.id, start: row.started_at != null, end: row.ended_at != null };
  }
  const fields = Buffer.from(envelope.line).toString('utf8').split('\t');
  return {
    project_id: unescapeTsvField(fields[0]!)!,
    id: unescapeTsvField(fields[1]!)!,
    start: fields[callPartColumn('started_at')] !== '\\N',
    end: fields[callPartColumn('ended_at')] !== '\\N',
  };
}

const callPartColumn = (name: keyof CallPartRow) => Object.keys(callPartRowSchema.shape).indexOf(name);

/**
 * About the bytes a call part takes on the wire (UTF-16 units of its text members plus a little
 * per field), without encoding it.
 */
export function envelopeBytes(envelope: CallPartEnvelope): number {
  if (envelope.v === 2) return envelope.line.length;
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

const lineOf = (envelope: CallPartEnvelope): string | Uint8Array => (envelope.v === 2 ? envelope.line : callPartTsvLine(envelope.row));

/**
 * The call-parts topic's codec: one part is written as version 2, the parts of one publish for
 * one partition as version 3 (the byte 0x03 then their lines: one record, the writer's insert
 * takes the lines as they are); reads all three.
 */
export const callPartCodec: EnvelopeCodec<CallPartEnvelope> = {
  sizeOf: envelopeBytes,
  encode(envelope) {
    if (envelope.v === 2) return Buffer.concat([Buffer.of(V2), envelope.line]);
    return Buffer.from('\u0002' + callPartTsvLine(envelope.row), 'utf8');
  },
  encodeMany(envelopes) {
    // Rows (what publishers build) as one string, encoded once; lines already encoded are copied.
    if (envelopes.every((e) => e.v === 1)) {
      let text = '\u0003';
      for (const e of envelopes) text += callPartTsvLine(e.row);
      return Buffer.from(text, 'utf8');
    }
    return Buffer.concat([
      Buffer.of(V3),
      ...envelopes.map((e) => lineOf(e)).map((l) => (typeof l === 'string' ? Buffer.from(l, 'utf8') : l)),
    ]);
  },
  decode(bytes) {
    if (!bytes || bytes.length === 0) throw new UndecodableMessageError('empty message value');
    if (bytes[0] === V3) throw new UndecodableMessageError('a version-3 value holds several parts (decodeMany reads it)');
    if (bytes[0] !== V2) return decodeV1(bytes);
    return decodeLine(bytes.subarray(1), 'version 2');
  },
  decodeMany(bytes) {
    if (!bytes || bytes.length === 0 || bytes[0] !== V3) return [callPartCodec.decode(bytes)];
    const parts: CallPartEnvelope[] = [];
    // Each line ends at its newline (a newline inside a field is escaped as `\n`).
    for (let at = 1; at < bytes.length;) {
      const end = bytes.indexOf(NEWLINE, at);
      const label = `version 3, part ${parts.length + 1}`;
      if (end < 0) throw new UndecodableMessageError(`invalid envelope (${label}): not a line (no final newline)`);
      parts.push(decodeLine(bytes.subarray(at, end + 1), label));
      at = end + 1;
    }
    if (parts.length === 0) throw new UndecodableMessageError('invalid envelope (version 3): no part');
    return parts;
  },
};

const NEWLINE = 0x0a;

/** One TabSeparated line as an envelope; `label` names the version (and part) in the error. */
function decodeLine(line: Uint8Array, label: string): CallPartEnvelope {
  const problem = callPartTsvLineProblem(line);
  if (problem) throw new UndecodableMessageError(`invalid envelope (${label}): ${problem}`);
  return { v: 2, kind: 'call_part', line };
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
