import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LINE_FRAGMENTS } from '../src/call-json';

/**
 * The line fragments the call tables build as rows are written (the baseline's MATERIALIZED columns) are
 * call-json.ts's LINE_FRAGMENTS, character for character: one definition of a Call's wire shape.
 * (That the spliced lines equal the field-by-field ones is test/call-lines.test.ts's business.)
 */
const baseline = readFileSync(join(__dirname, '../../store/src/migrations/200_baseline.sql'), 'utf8');
const require = createRequire(import.meta.url);
const chdb = require('chdb') as { query(sql: string, format?: string): string };

describe('call line fragments (calls_starts, calls_ends)', () => {
  it('are the expressions of LINE_FRAGMENTS', () => {
    expect(baseline).toContain(`\n  line_start String MATERIALIZED ${LINE_FRAGMENTS.start()},\n`);
    expect(baseline).toContain(`\n  line_svc String MATERIALIZED ${LINE_FRAGMENTS.svc()},\n`);
    expect(baseline).toContain(`\n  line_trace_name String MATERIALIZED ${LINE_FRAGMENTS.traceName()},\n`);
    expect(baseline).toContain(`\n  line_tail String MATERIALIZED ${LINE_FRAGMENTS.tail()},\n`);
    // The start's dumps are spliced in on read, never copied into a fragment.
    expect(baseline).not.toContain('line_head');
  });

  it('build a start and run fields the engine can evaluate, and the check can fail', () => {
    const [start, svc] = chdb
      .query(
        `SELECT ${LINE_FRAGMENTS.start()}, ${LINE_FRAGMENTS.svc()} FROM (SELECT 'a/b' AS id, 'p' AS project_id, 'op' AS op_name, 't' AS trace_id,
        NULL AS parent_id, NULL AS thread_id, NULL AS turn_id, toDateTime64('2024-01-01 00:00:01.5', 6, 'UTC') AS started_at, 'u' AS svc_user_id,
        NULL AS svc_run_id, 7 AS svc_run_step)
        SETTINGS output_format_json_escape_forward_slashes = 0`,
        'TSVRaw',
      )
      .trim()
      .split('\t');
    expect(JSON.parse(`${start}${svc}}`)).toEqual({
      id: 'a/b',
      project_id: 'p',
      op_name: 'op',
      trace_id: 't',
      parent_id: null,
      thread_id: null,
      turn_id: null,
      started_at: '2024-01-01T00:00:01.500Z',
      svc_user_id: 'u',
      svc_run_id: null,
      svc_run_step: 7,
      wb_user_id: 'u',
      wb_run_id: null,
      wb_run_step: 7,
    });
    expect(baseline).not.toContain(`MATERIALIZED ${LINE_FRAGMENTS.start().replace('"id"', '"ids"')},`);
  });
});
