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
 * inputs and output (0: ~300-byte calls; 350: ~1 KB); `stepMs`: the time between two calls' starts.
 */
export async function loadBenchCallRange(
  client: ClickHouseClient,
  project: string,
  from: number,
  to: number,
  pad: number,
  stepMs = 10,
): Promise<void> {
  const filler = pad ? `,"text":"', repeat(char(97 + number % 26), ${pad}), '"` : '';
  const id = `concat('c-', leftPad(toString(number), 9, '0'))`;
  const root = `concat('c-', leftPad(toString(number - number % 10), 9, '0'))`;
  const started = `toDateTime64('2024-01-01 00:00:00', 6, 'UTC') + toIntervalMillisecond(number * ${stepMs})`;
  await client.command({
    query: `INSERT INTO call_parts (project_id, id, trace_id, parent_id, thread_id, turn_id, op_name, started_at,
      attributes_dump, inputs_dump, input_refs, output_refs, svc_user_id, created_at)
    SELECT '${project}', ${id}, concat('t-', ${root}), if(number % 10 = 0, NULL, ${root}),
      concat('thread-', toString(intDiv(number, 50))), ${root}, concat('op-', toString(number % 20)), ${started},
      '{"env":"bench"}', concat('{"n":', toString(number % 1000), ',"s":"text-', toString(number % 7919), '","model":{"name":"m-', toString(number % 13), '"}${filler}}'),
      [], [], 'bench-user', now64(6)
    FROM numbers(${from}, ${to - from})`,
  });
  await client.command({
    query: `INSERT INTO call_parts (project_id, id, ended_at, output_dump, summary_dump, exception, input_refs, output_refs, created_at)
    SELECT '${project}', ${id}, ${started} + toIntervalMillisecond(5 + number % 997),
      concat('{"score":', toString((number % 100) / 100), '${filler}}'),
      if(number % 4 = 0, '{"usage":{"gpt-4o":{"prompt_tokens":1200,"completion_tokens":300,"requests":1}}}', '{}'),
      if(number % 101 = 0, 'boom', NULL), [], [], now64(6)
    FROM numbers(${from}, ${to - from})`,
  });
}
