import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InsertFiles, insertStatement } from '../src/insert-files';

describe('insert files (binary bodies for embedded inserts)', () => {
  it('removes files that dead processes left, keeps a running one’s, and each body’s file after its insert', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'weft-insert-files-')), 'insert-files');
    mkdirSync(dir);
    // pid 2^22 + 1 is above Linux's pid_max: never a running process.
    writeFileSync(join(dir, `${2 ** 22 + 1}-0.bin`), 'left by a crash');
    writeFileSync(join(dir, `${process.pid}-7.bin`), 'in use');
    const files = new InsertFiles(dir);
    expect(readdirSync(dir)).toEqual([`${process.pid}-7.bin`]);
    let seen = '';
    await files.with(Buffer.from('a\n\nbody'), async (path) => {
      seen = readFileSync(path, 'utf8');
    });
    expect(seen).toBe('a\n\nbody');
    await expect.poll(() => readdirSync(dir).length).toBe(1);
    expect(existsSync(join(dir, `${process.pid}-7.bin`))).toBe(true);
  });

  it('writes the statement with the file quoted, and refuses a name that is not plain', () => {
    expect(insertStatement('call_parts', ['a', 'b'], 'RowBinary', "/d/it's\\x.bin")).toBe(
      "INSERT INTO call_parts (a, b) FROM INFILE '/d/it\\'s\\\\x.bin' FORMAT RowBinary",
    );
    expect(insertStatement('t', ['a'], 'RowBinary')).toBe('INSERT INTO t (a) FORMAT RowBinary');
    expect(() => insertStatement('t; DROP', ['a'], 'RowBinary')).toThrow(/not a plain name/);
  });
});
