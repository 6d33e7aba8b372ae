import { RowRejectedError } from './errors';
import { CALL_PART_COLUMNS, CALL_PART_TYPES, type CallPartRow, type CallPartType } from './call-part-row';

/**
 * call_parts rows as ClickHouse `RowBinary`, the format the services insert: the engine reads it
 * for about a quarter less CPU per call than TabSeparated (docs/performance.md, "Decisions"):
 * no escapes to undo, times and numbers as integers instead of text to parse. Each row is
 * self-delimiting given the column types (CALL_PART_TYPES), so rows encoded apart concatenate
 * into one insert's body, and a body splits back into rows (`callPartRowBinaryEnd`).
 *
 * Per type: String = LEB128 byte length + UTF-8 bytes; Nullable(T) = one byte (1: NULL, 0: a T
 * follows); Array(String) = LEB128 count + the strings; DateTime64(6)/(3) = Int64 little-endian
 * microseconds/milliseconds since the epoch; UInt64 = 8 bytes little-endian.
 */

const TWO_32 = 4_294_967_296;

/** A growing buffer rows are written into; its bytes copied out per encode. */
class RowBinaryWriter {
  buf: Buffer;
  at = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  reserve(n: number): void {
    if (this.at + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + n) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }

  varint(n: number): void {
    while (n >= 0x80) {
      this.buf[this.at++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.at++] = n;
  }

  /** The text is written where it will end up and its length in front of it: no byteLength pass. */
  string(s: string): void {
    // A short text is copied by hand when it is ASCII: cheaper than a call into the runtime.
    if (s.length < 0x80 && this.ascii(s)) return;
    const most = s.length * 3; // UTF-8 bytes per UTF-16 unit, at most
    this.reserve(most + 10);
    const room = varintSize(most);
    const n = this.buf.write(s, this.at + room);
    const size = varintSize(n);
    // Fewer length bytes than reserved (a long text of mostly ASCII): move the text down.
    if (size < room) this.buf.copyWithin(this.at + size, this.at + room, this.at + room + n);
    this.varint(n);
    this.at += n;
  }

  /** Writes `s` with its length when every unit is ASCII (then bytes = units); false (nothing kept) when not. */
  private ascii(s: string): boolean {
    const n = s.length;
    this.reserve(n + 1);
    const buf = this.buf;
    const start = this.at + 1;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return false;
      buf[start + i] = c;
    }
    buf[this.at] = n;
    this.at = start + n;
    return true;
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[this.at++] = b;
  }

  /** An integer (|n| < 2^53) as 8 bytes little-endian, two's complement. */
  int64(n: number): void {
    this.reserve(8);
    const high = Math.floor(n / TWO_32);
    this.buf.writeUInt32LE(n - high * TWO_32, this.at);
    this.buf.writeInt32LE(high, this.at + 4);
    this.at += 8;
  }

  nullableString(s: string | null | undefined): void {
    if (s === null || s === undefined) this.byte(1);
    else {
      this.byte(0);
      this.string(s);
    }
  }

  strings(xs: readonly string[]): void {
    this.reserve(10);
    this.varint(xs.length);
    for (let i = 0; i < xs.length; i++) this.string(xs[i]!);
  }

  /** A DateTime64 column's value from the row's µs; `per` microseconds per unit. */
  time(micros: number, column: string, per: number): void {
    if (!Number.isSafeInteger(micros)) throw new RowRejectedError(`call part ${column}: not a time in µs: ${String(micros).slice(0, 100)}`);
    this.int64(Math.floor(micros / per));
  }

  nullableTime(micros: number | null | undefined, column: string, per: number): void {
    if (micros === null || micros === undefined) this.byte(1);
    else {
      this.byte(0);
      this.time(micros, column, per);
    }
  }

  nullableUInt64(n: number | null | undefined): void {
    if (n === null || n === undefined) this.byte(1);
    else {
      this.byte(0);
      this.int64(n);
    }
  }

  /** One row, columns in CALL_PART_COLUMNS order (spelled out: a loop over names costs ~2× here). */
  row(r: CallPartRow): void {
    this.string(r.project_id);
    this.string(r.id);
    this.nullableString(r.trace_id);
    this.nullableString(r.parent_id);
    this.nullableString(r.thread_id);
    this.nullableString(r.turn_id);
    this.nullableString(r.op_name);
    this.nullableString(r.display_name);
    this.nullableTime(r.started_at, 'started_at', 1);
    this.nullableTime(r.ended_at, 'ended_at', 1);
    this.nullableString(r.attributes_dump);
    this.nullableString(r.inputs_dump);
    this.strings(r.input_refs);
    this.nullableString(r.output_dump);
    this.strings(r.output_refs);
    this.nullableString(r.summary_dump);
    this.nullableString(r.exception);
    this.nullableString(r.otel_dump);
    this.nullableString(r.svc_user_id);
    this.nullableString(r.svc_run_id);
    this.nullableUInt64(r.svc_run_step);
    this.nullableUInt64(r.svc_run_step_end);
    this.nullableTime(r.deleted_at, 'deleted_at', 1000);
    this.time(r.created_at, 'created_at', 1);
  }
}

const varintSize = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x20_0000 ? 3 : n < 0x1000_0000 ? 4 : 5);

/**
 * Encodes call_parts rows as one RowBinary body into a buffer it keeps (grown as needed), the
 * body copied out per encode. One per user that encodes often (the bus codec, a publisher, the
 * conversions of a thread): no state shared between them.
 */
export class CallPartRowBinaryEncoder {
  private readonly writer: RowBinaryWriter;

  /** `size`: the buffer's first size (it grows to the largest body encoded). */
  constructor(size = 1 << 16) {
    this.writer = new RowBinaryWriter(size);
  }

  /**
   * Rows as one body, after `header` (bytes the caller's format puts first, such as an
   * envelope's version byte); `ends`, when given, gets where each row ends in the body. Throws
   * RowRejectedError when a time is not one (rows off the bus were checked as they were decoded).
   */
  encode(rows: readonly CallPartRow[], header?: Uint8Array, ends?: number[]): Buffer {
    const writer = this.writer;
    // The writer is empty between calls (`at` is reset below, whatever happens).
    if (header) {
      writer.reserve(header.length);
      writer.buf.set(header, 0);
      writer.at = header.length;
    }
    try {
      for (let i = 0; i < rows.length; i++) {
        writer.row(rows[i]!);
        ends?.push(writer.at);
      }
      return Buffer.from(writer.buf.subarray(0, writer.at));
    } finally {
      writer.at = 0;
    }
  }
}

/** Rows as one RowBinary body with an encoder of their own (a one-off: tests, diagnostics, an insert of rows). */
export function encodeCallPartsRowBinary(rows: readonly CallPartRow[], header?: Uint8Array, ends?: number[]): Buffer {
  return new CallPartRowBinaryEncoder(2048).encode(rows, header, ends);
}

/** Each column's type, in CALL_PART_COLUMNS order (how a row is read and skipped). */
const KINDS: readonly CallPartType[] = CALL_PART_COLUMNS.map((c) => CALL_PART_TYPES[c]);

/** A reader over one body; what is wrong with it is thrown as a RowBinaryProblem (its message the dead letter's reason). */
class RowBinaryReader {
  at: number;
  constructor(
    readonly bytes: Uint8Array,
    from: number,
  ) {
    this.at = from;
  }

  varint(): number {
    let n = 0;
    for (let scale = 1; ; scale *= 128) {
      if (this.at >= this.bytes.length) throw new RowBinaryProblem('cut short');
      const b = this.bytes[this.at++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      if (scale > 2 ** 28) throw new RowBinaryProblem('a length longer than 5 bytes');
    }
  }

  skip(n: number): number {
    if (this.at + n > this.bytes.length) throw new RowBinaryProblem('cut short');
    const from = this.at;
    this.at += n;
    return from;
  }

  string(): string {
    const n = this.varint();
    const from = this.skip(n);
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + from, n).toString('utf8');
  }

  skipString(): number {
    const n = this.varint();
    this.skip(n);
    return n;
  }

  isNull(): boolean {
    const flag = this.bytes[this.skip(1)];
    if (flag !== 0 && flag !== 1) throw new RowBinaryProblem(`a null flag of ${flag}`);
    return flag === 1;
  }

  int64(): number {
    const at = this.skip(8);
    const view = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + at, 8);
    return view.readInt32LE(4) * TWO_32 + view.readUInt32LE(0);
  }
}

class RowBinaryProblem extends Error {}

/** Reads one value of `kind`; times as µs, as the row holds them. */
function readValue(r: RowBinaryReader, kind: CallPartType): unknown {
  switch (kind) {
    case 'String':
      return r.string();
    case 'Array(String)': {
      const out: string[] = [];
      for (let n = r.varint(); n > 0; n--) out.push(r.string());
      return out;
    }
    case "DateTime64(6, 'UTC')":
      return r.int64();
    case "Nullable(DateTime64(3, 'UTC'))":
      return r.isNull() ? null : r.int64() * 1000;
    case "Nullable(DateTime64(6, 'UTC'))":
      return r.isNull() ? null : r.int64();
    case 'Nullable(String)':
      return r.isNull() ? null : r.string();
    case 'Nullable(UInt64)':
      return r.isNull() ? null : r.int64();
  }
}

/** How a row is skipped, per column: the layout of each type, without its meaning. */
const Layout = { String: 0, NullableString: 1, Strings: 2, Fixed8: 3, NullableFixed8: 4 } as const;
const LAYOUTS: readonly number[] = KINDS.map((kind) =>
  kind === 'String'
    ? Layout.String
    : kind === 'Nullable(String)'
      ? Layout.NullableString
      : kind === 'Array(String)'
        ? Layout.Strings
        : kind.startsWith('Nullable(')
          ? Layout.NullableFixed8
          : Layout.Fixed8,
);

/**
 * Where the row that starts at `from` ends (the offset after it), or why these bytes are not a
 * call_parts row as encodeCallPartsRowBinary writes it: cut short, a null flag other than 0 or
 * 1, an empty project or id. What the values hold is the engine's to check on insert (any 8
 * bytes are a time).
 */
export function callPartRowBinaryEnd(bytes: Uint8Array, from: number): number | string {
  const r = new RowBinaryReader(bytes, from);
  try {
    if (r.skipString() === 0) return 'empty project_id';
    if (r.skipString() === 0) return 'empty id';
    for (let i = 2; i < LAYOUTS.length; i++) {
      switch (LAYOUTS[i]) {
        case Layout.String:
          r.skipString();
          break;
        case Layout.NullableString:
          if (!r.isNull()) r.skipString();
          break;
        case Layout.Strings:
          for (let n = r.varint(); n > 0; n--) r.skipString();
          break;
        case Layout.Fixed8:
          r.skip(8);
          break;
        case Layout.NullableFixed8:
          if (!r.isNull()) r.skip(8);
          break;
      }
    }
    return r.at;
  } catch (e) {
    if (e instanceof RowBinaryProblem) return e.message;
    throw e;
  }
}

/** One row read back (diagnostics, tests); times as µs, as the row holds them. */
export function decodeCallPartRowBinary(bytes: Uint8Array): CallPartRow {
  const r = new RowBinaryReader(bytes, 0);
  const row: Record<string, unknown> = {};
  for (let i = 0; i < KINDS.length; i++) row[CALL_PART_COLUMNS[i]!] = readValue(r, KINDS[i]!);
  if (r.at !== bytes.length) throw new RowBinaryProblem(`${bytes.length - r.at} bytes after the row`);
  return row as CallPartRow;
}

/** What delivery counting needs of a part (its project, which halves it holds, when it was accepted), read without decoding its values. */
export interface CallPartFacts {
  project_id: string;
  started: boolean;
  ended: boolean;
  /** created_at: when the part was accepted (epoch µs). */
  createdAtMicros: number;
}

/**
 * A RowBinary row's facts (one row, exactly: a part's bytes as they come off the bus): the
 * project read, the strings up to the start and end times skipped by their lengths, created_at
 * (the last column) read from the row's last 8 bytes. Every stored part is read so: no value is
 * decoded.
 */
export function callPartRowBinaryFacts(bytes: Uint8Array): CallPartFacts {
  const r = new RowBinaryReader(bytes, 0);
  const project_id = r.string();
  r.skipString(); // id
  // trace_id, parent_id, thread_id, turn_id, op_name, display_name
  for (let i = 0; i < 6; i++) if (!r.isNull()) r.skipString();
  const started = !r.isNull();
  if (started) r.skip(8);
  const ended = !r.isNull();
  const tail = new RowBinaryReader(bytes, bytes.length - 8);
  return { project_id, started, ended, createdAtMicros: tail.int64() };
}
