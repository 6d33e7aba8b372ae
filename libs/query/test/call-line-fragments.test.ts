import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LINE_FRAGMENTS } from '../src/call-json';

/**
 * The line fragments the call tables build as rows are written (migrations 091 and 110) are
 * call-json.ts's LINE_FRAGMENTS, character for character: one definition of a Call's wire shape.
 * (That the spliced lines equal the field-by-field ones is test/call-lines.test.ts's business.)
 */
const migration = (file: string) => readFileSync(join(__dirname, '../../store/src/migrations', file), 'utf8');
const m091 = migration('091_call_line_fragments.sql');
const m110 = migration('110_call_start_fragments.sql');
const require = createRequire(import.meta.url);
const chdb = require('chdb') as { query(sql: string, format?: string): string };

describe('call line fragments (migrations 091, 110)', () => {
  it('are the expressions of LINE_FRAGMENTS', () => {
    expect(m110).toContain(`ADD COLUMN IF NOT EXISTS line_start String MATERIALIZED ${LINE_FRAGMENTS.start()};`);
    expect(m110).toContain(`ADD COLUMN IF NOT EXISTS line_svc String MATERIALIZED ${LINE_FRAGMENTS.svc()};`);
    expect(m091).toContain(`ADD COLUMN IF NOT EXISTS line_trace_name String MATERIALIZED ${LINE_FRAGMENTS.traceName()};`);
    expect(m091).toContain(`ADD COLUMN IF NOT EXISTS line_tail String MATERIALIZED ${LINE_FRAGMENTS.tail()};`);
    // 091's head (the start's dumps copied once more) is dropped by 110.
    expect(m110).toContain('DROP COLUMN IF EXISTS line_head;');
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
    expect(m110).not.toContain(`MATERIALIZED ${LINE_FRAGMENTS.start().replace('"id"', '"ids"')};`);
  });
});
