import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LINE_FRAGMENTS } from '../src/call-json';

/**
 * The line fragments the call tables build as rows are written (migration 091) are call-json.ts's
 * LINE_FRAGMENTS, character for character: one definition of a Call's wire shape. (That the
 * spliced lines equal the field-by-field ones is test/call-lines.test.ts's business.)
 */
const migration = readFileSync(join(__dirname, '../../store/src/migrations/091_call_line_fragments.sql'), 'utf8');
const require = createRequire(import.meta.url);
const chdb = require('chdb') as { query(sql: string, format?: string): string };

describe('call line fragments (migration 091)', () => {
  it('are the expressions of LINE_FRAGMENTS', () => {
    expect(migration).toContain(`ADD COLUMN IF NOT EXISTS line_head String MATERIALIZED ${LINE_FRAGMENTS.head()};`);
    expect(migration).toContain(`ADD COLUMN IF NOT EXISTS line_trace_name String MATERIALIZED ${LINE_FRAGMENTS.traceName()};`);
    expect(migration).toContain(`ADD COLUMN IF NOT EXISTS line_tail String MATERIALIZED ${LINE_FRAGMENTS.tail()};`);
  });

  it('build a head the engine can evaluate, and the check can fail', () => {
    const head = chdb.query(
      `SELECT ${LINE_FRAGMENTS.head()} FROM (SELECT 'a/b' AS id, 'p' AS project_id, 'op' AS op_name, 't' AS trace_id, NULL AS parent_id,
        NULL AS thread_id, NULL AS turn_id, toDateTime64('2024-01-01 00:00:01.5', 6, 'UTC') AS started_at, '{"k":1}' AS attributes_dump,
        NULL AS otel_dump, '{}' AS inputs_dump, 'u' AS svc_user_id, NULL AS svc_run_id, NULL AS svc_run_step)
        SETTINGS output_format_json_escape_forward_slashes = 0`,
      'TSVRaw',
    );
    expect(JSON.parse(`${head.trim()}}`)).toMatchObject({ id: 'a/b', started_at: '2024-01-01T00:00:01.500Z', attributes: { k: 1 } });
    expect(migration).not.toContain(`MATERIALIZED ${LINE_FRAGMENTS.head().replace('"id"', '"ids"')};`);
  });
});
