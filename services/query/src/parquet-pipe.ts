import { execFile } from 'node:child_process';
import { closeSync, constants, createReadStream, createWriteStream, openSync, rmSync } from 'node:fs';
import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyReply } from 'fastify';
import { sendStream } from '@weft/http';
import type { DownloadFraming } from './download-framing';

/**
 * Rows as a Parquet download. The engine converts the JSON lines while they are produced: they go
 * through a named pipe it reads from (the engine's connection for files runs beside the queries
 * that produce the lines, so both cores work and the lines are never all on disk). Parquet needs
 * the whole file for its footer, so the file is sent once written.
 *
 * One conversion at a time in a process: each holds a thread of Node's pool (4) for as long as
 * it reads, and the lines' own queries and file writes need that pool too.
 */
export async function sendParquet(
  reply: FastifyReply,
  framing: DownloadFraming,
  lines: AsyncIterable<Buffer | string>,
  convert: (input: string, output: string) => Promise<void>,
): Promise<void> {
  const parquet = await oneAtATime(async () => {
    const input = await namedPipe();
    const dir = await mkdtemp(join(tmpdir(), 'weft-export-'));
    try {
      const output = join(dir, 'rows.parquet');
      const converted = convert(input, output);
      // A conversion refused before it opened the pipe would leave the writer waiting to open it.
      converted.catch(() => closeSync(openSync(input, constants.O_RDONLY | constants.O_NONBLOCK)));
      const written = writeLines(input, lines);
      const [lineResult, convertResult] = await Promise.allSettled([written, converted]);
      // The lines' failure first (a refused query, a bad $expr, is the caller's 4xx), unless it is
      // the pipe closed by a failed conversion.
      const pipeClosed = lineResult.status === 'rejected' && (lineResult.reason as NodeJS.ErrnoException).code === 'EPIPE';
      if (lineResult.status === 'rejected' && !pipeClosed) throw lineResult.reason;
      if (convertResult.status === 'rejected') throw convertResult.reason;
      if (lineResult.status === 'rejected') throw lineResult.reason;
      return { dir, output };
    } catch (e) {
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  });
  try {
    await sendStream(reply, createReadStream(parquet.output, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>, framing);
  } finally {
    await rm(parquet.dir, { recursive: true, force: true });
  }
}

/** The lines into the pipe, then its end (the reader's end of input), whether they all came or not. */
async function writeLines(pipe: string, lines: AsyncIterable<Buffer | string>): Promise<void> {
  const out = createWriteStream(pipe, { highWaterMark: 1 << 20 });
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  failed.catch(() => undefined);
  try {
    for await (const chunk of lines) {
      if (!out.write(chunk)) await Promise.race([new Promise<void>((resolve) => out.once('drain', () => resolve())), failed]);
    }
  } finally {
    await Promise.race([new Promise<void>((resolve) => out.end(() => resolve())), failed]).catch(() => out.destroy());
  }
}

/**
 * The process's one named pipe, made on first use and kept: conversions run one at a time, so one
 * serves them all, and making one runs `mkfifo` in a child process, whose spawn holds Node's thread
 * for ~0.1 s once the process is large (every request waits). Made again if something removed it.
 */
let pipe: Promise<string> | undefined;
async function namedPipe(): Promise<string> {
  if (pipe) {
    const path = await pipe;
    const found = await lstat(path).catch(() => undefined);
    if (found?.isFIFO()) return path;
    pipe = undefined;
  }
  if (pipe) return pipe;
  const made = (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'weft-pipe-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'rows.jsonl');
    await promisify(execFile)('mkfifo', ['-m', '600', path]);
    return path;
  })();
  pipe = made;
  // A failed attempt is forgotten (the next export tries again), never a later one that replaced it.
  made.catch(() => {
    if (pipe === made) pipe = undefined;
  });
  return made;
}

let turn: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const mine = turn.then(work, work);
  turn = mine.catch(() => undefined);
  return mine;
}
