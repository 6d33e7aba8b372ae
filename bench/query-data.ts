import type { ClickHouseClient } from '@clickhouse/client';

/**
 * The bench:query data set (also used by bench:ui): calls of `project` inserted straight into
 * call_parts (INSERT … SELECT FROM numbers(), through the same materialized views as the writer).
 * Calls: 10 per trace (the first is the root and a turn of one of N/50 threads), 20 ops, a usage on every 4th.
 */
export async function loadBenchCalls(client: ClickHouseClient, project: string, n: number): Promise<void> {
  await loadBenchCallRange(client, project, 0, n, 0);
}

/**
 * Calls number `from` to `to` (exclusive) of the data set; `pad`: characters of filler text in
 * inputs and output (0: ~300-byte calls; 350: ~1 KB); `stepMs`: the time between two calls' starts;
 * `parts`: each call as one whole-call part (as Weave's calls_complete and OTLP send them) or as
 * a start part and an end part (as older SDKs send them); `opts.startAt`: the first call's start
 * (engine text, UTC; default 2024-01-01), `opts.opRefs`: op names as the SDK's op refs
 * (`weave:///<project>/op/op-<n>:v1`) rather than bare names.
 */
export async function loadBenchCallRange(
  client: ClickHouseClient,
  project: string,
  from: number,
  to: number,
  pad: number,
  stepMs = 10,
  parts: 'whole' | 'split' = 'split',
  opts: { startAt?: string; opRefs?: boolean } = {},
): Promise<void> {
  const filler = pad ? `,"text":"', repeat(char(97 + number % 26), ${pad}), '"` : '';
  const id = `concat('c-', leftPad(toString(number), 9, '0'))`;
  const root = `concat('c-', leftPad(toString(number - number % 10), 9, '0'))`;
  const started = `toDateTime64('${opts.startAt ?? '2024-01-01 00:00:00'}', 6, 'UTC') + toIntervalMillisecond(number * ${stepMs})`;
  const start = {
    trace_id: `concat('t-', ${root})`,
    parent_id: `if(number % 10 = 0, NULL, ${root})`,
    thread_id: `concat('thread-', toString(intDiv(number, 50)))`,
    turn_id: root,
    op_name: opts.opRefs ? `concat('weave:///${project}/op/op-', toString(number % 20), ':v1')` : `concat('op-', toString(number % 20))`,
    started_at: started,
    attributes_dump: `'{"env":"bench"}'`,
    inputs_dump: `concat('{"n":', toString(number % 1000), ',"s":"text-', toString(number % 7919), '","model":{"name":"m-', toString(number % 13), '"}${filler}}')`,
    svc_user_id: `'bench-user'`,
  };
  const end = {
    ended_at: `${started} + toIntervalMillisecond(5 + number % 997)`,
    output_dump: `concat('{"score":', toString((number % 100) / 100), '${filler}}')`,
    summary_dump: `if(number % 4 = 0, '{"usage":{"gpt-4o":{"prompt_tokens":1200,"completion_tokens":300,"requests":1}}}', '{}')`,
    exception: `if(number % 101 = 0, 'boom', NULL)`,
  };
  // At most CHUNK calls per statement: a statement's memory is capped (the lanes' max_memory_usage).
  const insert = async (columns: Record<string, string>) => {
    for (let at = from; at < to; at += CHUNK)
      await client.command({
        query: `INSERT INTO call_parts (project_id, id, ${Object.keys(columns).join(', ')}, input_refs, output_refs, created_at)
        SELECT '${project}', ${id}, ${Object.values(columns).join(', ')}, [], [], now64(6)
        FROM numbers(${at}, ${Math.min(to, at + CHUNK) - at})`,
      });
  };
  if (parts === 'whole') await insert({ ...start, ...end });
  else {
    await insert(start);
    await insert(end);
  }
}

/** Calls per insert statement of loadBenchCallRange (~1 KB calls: a few hundred MB of engine memory). */
const CHUNK = 250_000;
