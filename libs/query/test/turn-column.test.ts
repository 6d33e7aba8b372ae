import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TURN_SQL } from '../src/threads';

const baseline = readFileSync(fileURLToPath(new URL('../../store/src/migrations/200_baseline.sql', import.meta.url)), 'utf8');
const chdb = createRequire(import.meta.url)('chdb') as { query(sql: string, format?: string): string };

describe('calls_starts.is_turn', () => {
  it('is the expression the thread queries meant by a turn call (one definition, two places)', () => {
    expect(baseline).toContain(`\n  is_turn UInt8 MATERIALIZED ${TURN_SQL},\n`);
  });

  it('marks a call that is its own turn in a thread, nothing else', () => {
    const rows = chdb.query(
      `SELECT id, ${TURN_SQL} AS t FROM (SELECT arrayJoin([('a', 'a', 'th'), ('b', 'a', 'th'), ('c', NULL, 'th'), ('d', 'd', NULL), ('e', 'e', '')]) AS r,
        r.1 AS id, CAST(r.2, 'Nullable(String)') AS turn_id, CAST(r.3, 'Nullable(String)') AS thread_id) ORDER BY id`,
      'TSV',
    );
    expect(rows.trim().split('\n')).toEqual(['a\t1', 'b\t0', 'c\t0', 'd\t0', 'e\t0']);
  });
});
