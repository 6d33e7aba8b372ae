import { categoryOf, type Category } from './categories';

export type Outcome = 'passed' | 'failed' | 'skipped' | 'missing';

/** One test's result on one server (the plugin's JSON line). */
export interface TestResult {
  test: string;
  outcome: Outcome;
  message?: string;
}

export interface Exclusion {
  test: string;
  reason: string;
  why: string;
}

export interface RunResults {
  /** Every server test the suite has, less the excluded ones, by file. */
  tests: Map<string, string[]>;
  control: Map<string, TestResult>;
  weft: Map<string, TestResult>;
  excluded: Exclusion[];
  /** Error-level log records of the wefts, by test. */
  weftErrors: Map<string, string[]>;
}

interface Tally {
  tests: number;
  control: number;
  weft: number;
  both: number;
}

const tally = (): Tally => ({ tests: 0, control: 0, weft: 0, both: 0 });
const pct = (part: number, whole: number) => (whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)} %`);

/** The counts of the file table, and the totals per category. */
export function summarize(r: RunResults): {
  files: Map<string, Tally & { category: Category | 'mixed' }>;
  totals: Record<Category, Tally>;
} {
  const files = new Map<string, Tally & { category: Category | 'mixed' }>();
  const totals: Record<Category, Tally> = { core: tally(), extras: tally() };
  for (const [file, tests] of r.tests) {
    for (const test of tests) {
      const category = categoryOf(test);
      const row = files.get(`${file}\u0000${category}`) ?? { ...tally(), category };
      const onControl = r.control.get(test)?.outcome === 'passed';
      const onWeft = r.weft.get(test)?.outcome === 'passed';
      for (const t of [row, totals[category]]) {
        t.tests++;
        if (onControl) t.control++;
        if (onWeft) t.weft++;
        if (onControl && onWeft) t.both++;
      }
      files.set(`${file}\u0000${category}`, row);
    }
  }
  return { files, totals };
}

/** The markdown report: totals, the table per file split core / extras, the exclusions, the weft errors. */
export function renderReport(r: RunResults): string {
  const { files, totals } = summarize(r);
  const out: string[] = [];
  out.push('| | tests | pass on the control | pass on weft | of the control’s passes, pass on weft |');
  out.push('| --- | ---: | ---: | ---: | ---: |');
  for (const c of ['core', 'extras'] as const) {
    const t = totals[c];
    out.push(`| **${c}** | ${t.tests} | ${t.control} | ${t.weft} | ${t.both} (${pct(t.both, t.control)}) |`);
  }
  for (const c of ['core', 'extras'] as const) {
    out.push('', `### ${c}`, '', '| file | tests | control | weft | both |', '| --- | ---: | ---: | ---: | ---: |');
    const rows = [...files.entries()].filter(([, t]) => t.category === c).sort(([a], [b]) => a.localeCompare(b));
    for (const [key, t] of rows) {
      const file = key.split('\u0000')[0]!.replace(/^tests\//, '');
      out.push(`| ${file} | ${t.tests} | ${t.control} | ${t.weft} | ${t.both} |`);
    }
  }
  out.push('', `### Excluded (${r.excluded.length})`, '', '| test | reason |', '| --- | --- |');
  for (const e of [...r.excluded].sort((a, b) => a.test.localeCompare(b.test)))
    out.push(`| \`${e.test.replace(/^tests\//, '')}\` | ${e.why} |`);
  const withErrors = [...r.weftErrors.entries()].filter(([, e]) => e.length > 0);
  out.push(
    '',
    `weft error-level log records (5xx included): ${withErrors.reduce((n, [, e]) => n + e.length, 0)} in ${withErrors.length} tests.`,
  );
  for (const [test, errors] of withErrors) out.push(`- \`${test}\`: ${[...new Set(errors)].join('; ')}`);
  return `${out.join('\n')}\n`;
}

/** The tests the control passes and weft does not, with weft's failure, by category: what to read next. */
export function renderDifferences(r: RunResults): string {
  const out: string[] = [];
  for (const c of ['core', 'extras'] as const) {
    out.push(`## ${c}`, '');
    for (const tests of r.tests.values()) {
      for (const test of tests) {
        if (categoryOf(test) !== c || r.control.get(test)?.outcome !== 'passed') continue;
        const w = r.weft.get(test);
        if (w?.outcome === 'passed') continue;
        out.push(`- \`${test}\` — ${w?.outcome ?? 'missing'}: ${w?.message ?? ''}`);
      }
    }
    out.push('');
  }
  return out.join('\n');
}
