import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from '@weft/core';

/**
 * Binary insert bodies (RowBinary) reach embedded chDB through a file the INSERT reads
 * (`FROM INFILE`). chdb-node 3.4's raw insert takes text formats only, and data given after the
 * statement ends at its first blank line: binary rows hold the bytes `\n\n` (inside a time, a
 * length, a text), so they would be cut short (call-part-encodings.test.ts inserts them). The
 * file costs a write and a read of the body (~1 ms for 4 MB), far less than the text parse it
 * saves. Files live in one directory, named by the process; a store opening removes those of
 * processes no longer running (a crash leaves some).
 */
export class InsertFiles {
  private next = 0;

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) {
      const pid = Number(name.split('-')[0]);
      if (!Number.isInteger(pid) || !processAlive(pid)) rmSync(join(dir, name), { force: true });
    }
  }

  /** Writes `bytes` to a file of its own, runs `use` with its path, removes it. */
  async with(bytes: Uint8Array, use: (path: string) => Promise<void>): Promise<void> {
    const path = join(this.dir, `${process.pid}-${this.next++}.bin`);
    // The whole body in one write: writeFile's 512 KiB chunks each wait for a turn of a busy
    // event loop (a request's parse), which made a 9 MB insert take a second of wall time. A
    // write may still take fewer bytes than given (a full disk): the rest is written after it.
    const file = await open(path, 'w');
    try {
      for (let at = 0; at < bytes.length;) {
        const { bytesWritten } = await file.write(bytes, at, bytes.length - at, at);
        if (bytesWritten === 0) throw new Error(`${path}: the disk took none of the insert's bytes`);
        at += bytesWritten;
      }
    } finally {
      await file.close();
    }
    try {
      await use(path);
    } finally {
      // Not waited for: the insert is done; a file left by a crash is removed at the next start.
      unlink(path).catch(() => undefined);
    }
  }
}

/**
 * `INSERT INTO t (a, b) [FROM INFILE 'path'] FORMAT f`: the body follows (over HTTP) or is the
 * file. Every name is one of ours, checked anyway.
 */
export function insertStatement(table: string, columns: readonly string[], format: string, infile?: string): string {
  for (const name of [table, format, ...columns]) {
    if (!/^\w+$/.test(name)) throw new Error(`not a plain name in an insert: ${JSON.stringify(name)}`);
  }
  const from = infile === undefined ? '' : ` FROM INFILE '${infile.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return `INSERT INTO ${table} (${columns.join(', ')})${from} FORMAT ${format}`;
}
