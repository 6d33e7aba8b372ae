import {
  closeSync,
  existsSync,
  fdatasync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writevSync,
  ftruncateSync,
} from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { processAlive } from '@weft/core';

export interface LocalLogOptions {
  dir: string;
  /** A segment past this many bytes is closed and a new one started. */
  segmentBytes: number;
  /** fdatasync after each append (the disk, not only the page cache). */
  fsync: boolean;
}

/**
 * An append that failed. `firstSeq` ≥ 0: the records are in the file all the same under these
 * sequence numbers (only the sync failed); -1: nothing was written.
 */
export class LogWriteError extends Error {
  constructor(
    message: string,
    readonly firstSeq = -1,
  ) {
    super(message);
    this.name = 'LogWriteError';
  }
}

export interface LogRecord {
  seq: number;
  payload: Buffer;
}

const HEADER = 8;
const COMMITTED = 'committed';
/** The pid of the process that has the log open: two writers on one log would interleave frames. */
const OWNER = 'owner.pid';
const SEGMENT = /^(\d{20})\.log$/;

const segmentName = (seq: number) => `${String(seq).padStart(20, '0')}.log`;

/**
 * An append-only log of records in segment files under one directory, the durable half of the
 * all-in-one's log bus: a record is acknowledged once it is in the file (the page cache: it
 * survives the process being killed, as the engine's own inserts do; `fsync` adds the disk).
 * What the consumer has stored is recorded as a sequence number (`committed`); a start reads
 * back the records after it. Segments wholly committed are deleted.
 *
 * File format: segments named by the sequence number of their first record (20 digits), each a
 * run of frames `u32 length | u32 crc32(payload) | payload` (little-endian). A frame cut short
 * or failing its checksum can only be the tail of the last segment (a write interrupted by a
 * kill, never acknowledged): it is cut off when the log is opened.
 */
export class LocalLog {
  private fd = -1;
  private segmentStart = 0;
  private segmentSize = 0;
  /** Sequence number the next record gets. */
  private nextSeq = 0;
  private committedSeq = -1;
  /** Segments by first sequence number, oldest first (the open one last). */
  private readonly segments: number[] = [];

  constructor(private readonly opts: LocalLogOptions) {}

  /** Opens the log (creating it when absent) and returns the records not yet committed, in order. */
  open(): LogRecord[] {
    mkdirSync(this.opts.dir, { recursive: true });
    this.claim();
    const committedFile = join(this.opts.dir, COMMITTED);
    if (existsSync(committedFile)) this.committedSeq = Number(readFileSync(committedFile, 'utf8').trim());
    const starts = readdirSync(this.opts.dir)
      .map((f) => SEGMENT.exec(f)?.[1])
      .filter((s): s is string => s !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const pending: LogRecord[] = [];
    this.nextSeq = this.committedSeq + 1;
    starts.forEach((start, i) => {
      const file = join(this.opts.dir, segmentName(start));
      const bytes = readFileSync(file);
      const { records, end: at } = readFrames(bytes, start);
      for (const r of records) if (r.seq > this.committedSeq) pending.push(r);
      const seq = start + records.length;
      if (at < bytes.length) {
        // A torn frame: only the last segment's tail can be one (a write cut by a kill, never acknowledged).
        if (i !== starts.length - 1) throw new Error(`local log ${file}: corrupt frame at byte ${at} of a closed segment`);
        const fd = openSync(file, 'r+');
        ftruncateSync(fd, at);
        closeSync(fd);
      }
      this.segments.push(start);
      this.nextSeq = Math.max(this.nextSeq, seq);
      this.segmentStart = start;
      this.segmentSize = at;
    });
    if (this.segments.length === 0) this.startSegment(this.nextSeq);
    else this.fd = openSync(join(this.opts.dir, segmentName(this.segmentStart)), 'a');
    this.dropCommittedSegments();
    return pending;
  }

  /** The records not yet committed, read again from the files (the log stays open; a torn tail is left out). */
  read(): LogRecord[] {
    const out: LogRecord[] = [];
    for (const start of this.segments) {
      const bytes = readFileSync(join(this.opts.dir, segmentName(start)), { flag: 'r' });
      for (const r of readFrames(bytes, start).records) if (r.seq > this.committedSeq) out.push(r);
    }
    return out;
  }

  /** Appends payloads as consecutive records (one write); resolves with the first one's sequence number once written. */
  async append(payloads: Buffer[]): Promise<number> {
    if (this.segmentSize >= this.opts.segmentBytes) this.startSegment(this.nextSeq);
    const buffers: Buffer[] = [];
    let bytes = 0;
    for (const p of payloads) {
      const header = Buffer.allocUnsafe(HEADER);
      header.writeUInt32LE(p.length, 0);
      header.writeUInt32LE(crc32(p), 4);
      buffers.push(header, p);
      bytes += HEADER + p.length;
    }
    try {
      writeAll(this.fd, buffers, bytes);
    } catch (e) {
      // A write cut short (disk full, I/O error) must not leave a torn frame before the next
      // append's: cut the segment back to where this one began.
      ftruncateSync(this.fd, this.segmentSize);
      throw new LogWriteError(`local log ${this.opts.dir}: write failed (${(e as Error).message})`);
    }
    const first = this.nextSeq;
    this.nextSeq += payloads.length;
    this.segmentSize += bytes;
    if (this.opts.fsync) {
      const fd = this.fd;
      await new Promise<void>((resolve, reject) =>
        fdatasync(fd, (e) =>
          e ? reject(new LogWriteError(`local log ${this.opts.dir}: fdatasync failed (${e.message})`, first)) : resolve(),
        ),
      );
    }
    return first;
  }

  /** Records up to `seq` are stored: recorded (a later open starts after them), wholly committed segments deleted. */
  commit(seq: number): void {
    if (seq <= this.committedSeq) return;
    this.committedSeq = seq;
    const file = join(this.opts.dir, COMMITTED);
    writeFileSync(`${file}.tmp`, String(seq));
    renameSync(`${file}.tmp`, file);
    this.dropCommittedSegments();
  }

  /** Bytes of the segment files on disk. */
  diskBytes(): number {
    let n = 0;
    for (const s of this.segments) n += statSync(join(this.opts.dir, segmentName(s)), { throwIfNoEntry: false })?.size ?? 0;
    return n;
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    rmSync(join(this.opts.dir, OWNER), { force: true });
  }

  /**
   * Takes the log for this process, or fails naming the live process that has it (e.g. two
   * all-in-one processes on one WEFT_DATA_DIR against one ClickHouse server). A killed owner's
   * file is stale: its pid is gone.
   */
  private claim(): void {
    const file = join(this.opts.dir, OWNER);
    const owner = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN;
    if (Number.isInteger(owner) && owner !== process.pid && processAlive(owner))
      throw new Error(
        `local log ${this.opts.dir} is in use by process ${owner}: give each process its own WEFT_DATA_DIR (or remove ${file} if that process is not a weft)`,
      );
    writeFileSync(file, String(process.pid));
  }

  private startSegment(seq: number): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = openSync(join(this.opts.dir, segmentName(seq)), 'a');
    this.segments.push(seq);
    this.segmentStart = seq;
    this.segmentSize = 0;
  }

  /** Deletes the segments every record of which is committed (a segment ends where the next begins). */
  private dropCommittedSegments(): void {
    while (this.segments.length > 1 && this.segments[1]! - 1 <= this.committedSeq) {
      rmSync(join(this.opts.dir, segmentName(this.segments.shift()!)), { force: true });
    }
  }
}

/** The whole frames of a segment whose first record is `start`, and where they end (a torn or corrupt frame stops the read). */
function readFrames(bytes: Buffer, start: number): { records: LogRecord[]; end: number } {
  const records: LogRecord[] = [];
  let at = 0;
  while (at + HEADER <= bytes.length) {
    const length = bytes.readUInt32LE(at);
    const end = at + HEADER + length;
    if (end > bytes.length) break;
    const payload = bytes.subarray(at + HEADER, end);
    if (crc32(payload) !== bytes.readUInt32LE(at + 4)) break;
    records.push({ seq: start + records.length, payload: Buffer.from(payload) });
    at = end;
  }
  return { records, end: at };
}

/** writev until every byte is written (a regular file may take a write in parts). */
function writeAll(fd: number, buffers: Buffer[], total: number): void {
  let written = writevSync(fd, buffers);
  while (written < total) {
    const rest = Buffer.concat(buffers).subarray(written);
    written += writevSync(fd, [rest]);
  }
}
