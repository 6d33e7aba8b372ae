import { createWriteStream } from 'node:fs';
import { type Writable } from 'node:stream';
import { roundFigure } from '@weft/core';
import type { ReadCommand } from './commands';

/**
 * `weft export`, `weft analytics`, `weft retention`, `weft redaction|sampling|delivery`, `weft dead-letters` and `weft delete`:
 * one request to a running server (a POST, or Weave's GET with the body as its query string). An export streams to the
 * file (or stdout) as it arrives, with its progress on stderr (rows of JSONL/CSV out of the
 * matching count, bytes of Parquet); a metrics query prints its rows as JSON or CSV.
 */
export async function runRead(cmd: ReadCommand, progress: NodeJS.WriteStream = process.stderr): Promise<void> {
  const authorization: Record<string, string> = cmd.apiKey
    ? { authorization: `Basic ${Buffer.from(`api:${cmd.apiKey}`).toString('base64')}` }
    : {};
  const post = (path: string, body: Record<string, unknown>) =>
    cmd.method === 'GET'
      ? fetch(new URL(`${path}?${new URLSearchParams(body as Record<string, string>)}`, cmd.url), { headers: authorization })
      : fetch(new URL(path, cmd.url), {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...authorization },
          body: JSON.stringify(body),
        });
  const res = await post(cmd.path, cmd.body);
  if (!res.ok || !res.body) {
    const reason = ((await res.json().catch(() => ({}))) as { reason?: string }).reason ?? res.statusText;
    throw new Error(`${res.status}: ${reason}`);
  }
  const out = cmd.out ? createWriteStream(cmd.out) : process.stdout;
  if (cmd.kind === 'retention' || cmd.kind === 'settings' || cmd.kind === 'dead-letters' || cmd.kind === 'delete') {
    await write(out, JSON.stringify(await res.json(), null, 2) + '\n');
    return end(out);
  }
  if (cmd.kind === 'analytics') {
    const { rows, truncated } = (await res.json()) as { rows: Record<string, unknown>[]; truncated: boolean };
    await write(out, cmd.csv ? toCsv(rows) : JSON.stringify({ rows, truncated }, null, 2) + '\n');
    if (truncated) progress.write('weft: more groups matched than --limit; the rows are cut\n');
    return end(out);
  }
  const { query, filter } = cmd.body as { query?: unknown; filter?: unknown };
  const stats = await post('/calls/query_stats', { project_id: cmd.body.project_id, query, filter }).then(
    (r) => r.json() as Promise<{ count?: number }>,
  );
  const total = typeof stats.count === 'number' ? Math.min(stats.count, Number(cmd.body.limit ?? Infinity)) : undefined;
  const byRows = cmd.body.format !== 'parquet';
  let rows = byRows ? -1 : 0; // a CSV's header is not a row
  if (cmd.body.format === 'jsonl') rows = 0;
  let bytes = 0;
  let shown = 0;
  // A terminal gets one line rewritten in place; a log or a pipe (no TTY) a line per update, fewer of them.
  const tty = progress.isTTY === true;
  const show = (final = false) => {
    if (!final && Date.now() - shown < (tty ? 200 : 5000)) return;
    shown = Date.now();
    const what = byRows ? `${Math.max(rows, 0)}${total !== undefined ? ` / ${total}` : ''} calls` : `${(bytes / 1e6).toFixed(1)} MB`;
    const line = `exporting ${cmd.body.project_id}: ${what}`;
    progress.write(tty ? `\r${line}${final ? '\n' : ''}` : `${line}\n`);
  };
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    if (byRows) for (const b of chunk) if (b === 10) rows++;
    await write(out, chunk);
    show();
  }
  show(true);
  await end(out);
}

function write(out: Writable | NodeJS.WriteStream, chunk: Uint8Array | string): Promise<void> {
  return new Promise((resolve, reject) => (out.write(chunk, (e) => (e ? reject(e) : resolve())) ? undefined : undefined));
}

function end(out: Writable | NodeJS.WriteStream): Promise<void> {
  if (out === process.stdout) return Promise.resolve();
  return new Promise((resolve) => out.end(() => resolve()));
}

/** Rows as RFC 4180 CSV, the columns in the first row's order. */
export function toCsv(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '';
  const cols = Object.keys(rows[0]!);
  const field = (v: unknown) => {
    if (v === null || v === undefined) return '';
    // A server before figures were rounded at the edge may still send float noise.
    if (typeof v === 'number') return String(roundFigure(v));
    const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [cols.join(','), ...rows.map((r) => cols.map((c) => field(r[c])).join(','))].join('\r\n') + '\r\n';
}
