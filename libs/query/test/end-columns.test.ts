import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { endStatusSql, USAGE_TYPE, usageSql } from '../src/end-columns';

const baseline = readFileSync(fileURLToPath(new URL('../../store/src/migrations/200_baseline.sql', import.meta.url)), 'utf8');
/** The type and MATERIALIZED expression the baseline gives calls_ends' column `name`. */
function column(name: string): { type: string; expr: string } {
  const m = new RegExp(`^  ${name} (.+?) MATERIALIZED (.+),$`, 'm').exec(baseline);
  if (!m) throw new Error(`the baseline has no column ${name}`);
  return { type: m[1]!, expr: m[2]! };
}

describe('calls_ends ready-made columns', () => {
  it('the schema stores what the query library computes for a merged call (one definition, two places)', () => {
    expect(column('status')).toEqual({ type: 'LowCardinality(String)', expr: endStatusSql('exception', 'summary_dump') });
    expect(column('usage')).toEqual({ type: USAGE_TYPE, expr: usageSql('summary_dump') });
  });
});
