import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { endStatusSql, USAGE_TYPE, usageSql } from '../src/end-columns';

const migration = readFileSync(
  fileURLToPath(new URL('../../store/src/migrations/100_calls_ends_ready_columns.sql', import.meta.url)),
  'utf8',
);
/** The type and MATERIALIZED expression the migration gives calls_ends' column `name`. */
function column(name: string): { type: string; expr: string } {
  const m = new RegExp(`ADD COLUMN IF NOT EXISTS ${name} (.+?) MATERIALIZED (.+);$`, 'm').exec(migration);
  if (!m) throw new Error(`migration 100 adds no column ${name}`);
  return { type: m[1]!, expr: m[2]! };
}

describe('calls_ends ready-made columns', () => {
  it('the migration stores what the query library computes for a merged call (one definition, two places)', () => {
    expect(column('status')).toEqual({ type: 'LowCardinality(String)', expr: endStatusSql('exception', 'summary_dump') });
    expect(column('usage')).toEqual({ type: USAGE_TYPE, expr: usageSql('summary_dump') });
  });
});
