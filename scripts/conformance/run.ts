/**
 * The conformance job: Weave's own test suite (tests/trace, tests/trace_server of a weave
 * checkout) against weft and, as the control, against the reference's in-process SQLite server.
 * See docs/conformance.md. Usage:
 *
 *   nice -n 10 npx tsx scripts/conformance/run.ts --suite /work/weave-suite [--files test_feedback,test_dataset]
 *     [--only weft|control] [--timeout 120] [--fresh] [--report-only] [--out .cache/conformance]
 *
 * Results are kept per file under --out, so an interrupted run resumes where it stopped
 * (--fresh starts over); report.md and differences.md are rewritten at the end of every run.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, TEST_ROOT } from '@weft/harness';
import { renderDifferences, renderReport, type Exclusion, type RunResults, type TestResult } from './report';
import { ensureSuiteVenv } from './suite-venv';
import { WeftPool } from './weft-pool';

const HERE = join(REPO_ROOT, 'scripts', 'conformance');
type Target = 'control' | 'weft';

const { values: args } = parseArgs({
  options: {
    suite: { type: 'string' },
    out: { type: 'string', default: join(REPO_ROOT, '.cache', 'conformance') },
    files: { type: 'string' },
    only: { type: 'string' },
    timeout: { type: 'string', default: '120' },
    fresh: { type: 'boolean', default: false },
    'report-only': { type: 'boolean', default: false },
  },
});
if (!args.suite) throw new Error('--suite <path of a weave checkout holding tests/> is required (docs/conformance.md)');
const suite = resolve(args.suite);
const out = resolve(args.out!);
const targets: Target[] = args.only ? [args.only as Target] : ['control', 'weft'];
const log = (line: string) => console.log(`[conformance] ${line}`);

// A shared machine: the job and every process it starts (pytest, weft) run at low priority.
setPriority(Math.max(getPriority(), 10));

const slug = (file: string) => file.replace(/\//g, '__');
const resultsPath = (target: Target, file: string) => join(out, target, `${slug(file)}.jsonl`);
const donePath = (target: Target, file: string) => join(out, target, `${slug(file)}.done`);

/** Runs pytest in the suite's checkout with our plugin; resolves to its exit code. */
function pytest(python: string, argv: string[], env: Record<string, string>, killAfterMs: number, logFile: string): Promise<number | null> {
  return new Promise((done) => {
    const proc = spawn(python, ['-m', 'pytest', ...argv], {
      cwd: suite,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: join(out, 'home'),
        PYTHONPATH: HERE,
        WANDB_ERROR_REPORTING: 'false',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    proc.stdout.on('data', (d) => (output += String(d)));
    proc.stderr.on('data', (d) => (output += String(d)));
    const timer = setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      writeFileSync(logFile, output);
      done(code);
    });
  });
}

const COMMON = ['-p', 'weft_conformance', '--trace-server=sqlite', '-o', 'addopts=', '-p', 'no:cacheprovider', '-q'];

/** The suite's server tests (ids), by file, as pytest collects them; and the excluded ones. */
async function collect(python: string): Promise<{ tests: Map<string, string[]>; excluded: string[] }> {
  const recorded = join(out, 'collected.jsonl');
  rmSync(recorded, { force: true });
  const logFile = join(out, 'collect.log');
  await pytest(
    python,
    [...COMMON, '--collect-only', '--continue-on-collection-errors', 'tests/trace', 'tests/trace_server'],
    { WEFT_CONFORMANCE_RESULTS: recorded },
    600_000,
    logFile,
  );
  const tests = new Map<string, string[]>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('::')) continue;
    const file = line.split('::', 1)[0]!;
    tests.set(file, [...(tests.get(file) ?? []), line.trim()]);
  }
  const excluded = existsSync(recorded)
    ? readFileSync(recorded, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { test: string }).test)
    : [];
  return { tests, excluded };
}

function readResults(target: Target, files: Iterable<string>): Map<string, TestResult> {
  const results = new Map<string, TestResult>();
  for (const file of files) {
    const path = resultsPath(target, file);
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, 'utf8').split('\n').filter(Boolean)) {
      const r = JSON.parse(line) as TestResult;
      results.set(r.test, r);
    }
  }
  return results;
}

async function main() {
  mkdirSync(join(out, 'home'), { recursive: true });
  for (const t of targets) mkdirSync(join(out, t), { recursive: true });
  const python = await ensureSuiteVenv(log);
  // The wheel leaves out the reference server's model catalogue; the checkout has it.
  const providers = join(dirname(python), '..', 'lib', 'python3.11', 'site-packages', 'weave', 'trace_server', 'model_providers');
  const fromSuite = join(suite, 'weave', 'trace_server', 'model_providers');
  if (!existsSync(providers)) {
    if (!existsSync(fromSuite))
      throw new Error(`${fromSuite} is missing: extract weave/trace_server/model_providers too (docs/conformance.md)`);
    cpSync(fromSuite, providers, { recursive: true, dereference: false });
  }

  log('collecting the suite');
  const { tests, excluded } = await collect(python);
  const wanted = args.files?.split(',').map((s) => s.trim());
  const files = [...tests.keys()].filter((f) => !wanted || wanted.some((w) => f.includes(w)));
  log(
    `${[...tests.values()].reduce((n, t) => n + t.length, 0)} server tests in ${tests.size} files; ${excluded.length} excluded; running ${files.length} files`,
  );

  let pool: WeftPool | null = null;
  let poolUrl = '';
  try {
    for (const [i, file] of files.entries()) {
      if (args['report-only']) break;
      for (const target of targets) {
        if (!args.fresh && existsSync(donePath(target, file))) continue;
        if (target === 'weft' && !pool) {
          pool = new WeftPool(join(TEST_ROOT, 'conformance'));
          poolUrl = await pool.start();
        }
        rmSync(resultsPath(target, file), { force: true });
        const started = Date.now();
        const count = tests.get(file)!.length;
        const code = await pytest(
          python,
          [...COMMON, `--timeout=${args.timeout}`, file],
          { WEFT_CONFORMANCE_RESULTS: resultsPath(target, file), ...(target === 'weft' ? { WEFT_CONFORMANCE_POOL: poolUrl } : {}) },
          (count + 5) * Number(args.timeout) * 1000,
          join(out, target, `${slug(file)}.log`),
        );
        if (target === 'weft') {
          writeFileSync(join(out, 'weft', `${slug(file)}.errors.json`), JSON.stringify(pool!.records.splice(0)));
        }
        const passed = readResults(target, [file]);
        const n = [...passed.values()].filter((r) => r.outcome === 'passed').length;
        log(
          `${i + 1}/${files.length} ${file} on ${target}: ${n}/${count} passed in ${Math.round((Date.now() - started) / 1000)} s (exit ${code})`,
        );
        writeFileSync(donePath(target, file), '');
      }
    }
  } finally {
    await pool?.close();
  }

  // The report covers every file that has results on both sides.
  const reported = [...tests.keys()].filter((f) => existsSync(donePath('control', f)) && existsSync(donePath('weft', f)));
  const exclusions = JSON.parse(readFileSync(join(HERE, 'exclusions.json'), 'utf8')) as {
    reasons: Record<string, string>;
    excluded: { test: string; reason: string; note?: string }[];
  };
  const whyOf = (test: string): string => {
    const base = test.split('[', 1)[0]!;
    const e = exclusions.excluded.find((x) => x.test === test || x.test === base || x.test === test.split('::', 1)[0]);
    return e ? `${exclusions.reasons[e.reason] ?? e.reason}${e.note ? ` (${e.note})` : ''}` : '';
  };
  const weftErrors = new Map<string, string[]>();
  for (const f of reported) {
    const path = join(out, 'weft', `${slug(f)}.errors.json`);
    if (!existsSync(path)) continue;
    for (const rec of JSON.parse(readFileSync(path, 'utf8')) as { test: string; errors: string[] }[]) {
      weftErrors.set(rec.test, [...(weftErrors.get(rec.test) ?? []), ...rec.errors]);
    }
  }
  const results: RunResults = {
    tests: new Map(reported.map((f) => [f, tests.get(f)!])),
    control: readResults('control', reported),
    weft: readResults('weft', reported),
    excluded: excluded.map((test): Exclusion => ({ test, reason: '', why: whyOf(test) })),
    weftErrors,
  };
  writeFileSync(join(out, 'report.md'), renderReport(results));
  writeFileSync(join(out, 'differences.md'), renderDifferences(results));
  log(`report: ${join(out, 'report.md')} (${reported.length} files), differences: ${join(out, 'differences.md')}`);
  process.stdout.write(renderReport(results).split('\n').slice(0, 4).join('\n') + '\n');
}

await main();
