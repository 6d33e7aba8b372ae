/**
 * Pagination cursors: opaque to the model, an offset underneath, tagged with the tool and the
 * question (a hash of its arguments) so a cursor given to another tool or another question is
 * refused with a clear error instead of answering the wrong page.
 */
import { createHash } from 'node:crypto';

/** A tool's argument that is refused: the message names it, as the protocol's validation errors do. */
export class ArgumentError extends Error {
  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(`Invalid argument "${argument}": ${message}`);
  }
}

interface CursorBody {
  t: string;
  q: string;
  o: number;
}

/** A short hash of the arguments that define the question (not the cursor or budget). */
export function questionOf(args: Record<string, unknown>): string {
  const { cursor: _c, max_chars: _m, ...rest } = args;
  return createHash('sha256').update(stable(rest)).digest('base64url').slice(0, 10);
}

export function encodeCursor(tool: string, args: Record<string, unknown>, offset: number): string {
  const body: CursorBody = { t: tool, q: questionOf(args), o: offset };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** The offset a cursor points at (0 without one). */
export function decodeCursor(tool: string, args: Record<string, unknown>, cursor: string | undefined): number {
  if (cursor === undefined || cursor === '') return 0;
  let body: CursorBody;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorBody;
  } catch {
    throw new ArgumentError('cursor', 'not a cursor this server gave');
  }
  if (body?.t !== tool || !Number.isInteger(body.o) || body.o < 0) throw new ArgumentError('cursor', `not a cursor of ${tool}`);
  if (body.q !== questionOf(args)) throw new ArgumentError('cursor', 'given for other arguments: repeat the call that returned it');
  return body.o;
}

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}
