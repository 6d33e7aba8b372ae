/**
 * Alternated pairs (`npm run bench:pairs -- <base-ref> [pairs]`): runs a benchmark on a base
 * commit and on this working tree in turn, N times, and prints each pair's figures side by side
 * with their ratios. On a shared machine the same build reads ±20 % between consecutive runs,
 * so a change is judged by the ratios within pairs, not by runs minutes apart
 * (docs/performance.md). The order alternates (base first, then head first) so that a machine
 * slowing down over the run does not favour one side.
 *
 * The base is checked out as a git worktree outside the repository (BENCH_PAIRS_DIR, default
 * `<tmpdir>/weft-bench-pairs/<commit>`, kept for the next run); its node_modules are hard links
 * to this tree's when both lockfiles are the same (workspace links stay relative, so they point
 * at the base's own libs), else `npm ci`.
 *
 * Env: BENCH_PAIRS_SCRIPT (the npm script run on both sides, default bench:ingest; bench:query's
 * and bench:analytics' figures are read from their lines), any other
 * variable is passed to both runs (BENCH_SECONDS, BENCH_MODES…). Each run's whole output is
 * kept beside the worktree (`<dir>/runs/`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@weft/harness';

const [baseRef = 'HEAD', pairsArg = '3'] = process.argv.slice(2);
const PAIRS = Number(pairsArg);
const SCRIPT = process.env.BENCH_PAIRS_SCRIPT ?? 'bench:ingest';
const ROOT = process.env.BENCH_PAIRS_DIR ?? join(tmpdir(), 'weft-bench-pairs');

function run(cmd: string, args: string[], cwd: string, quiet = true): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: quiet ? 'pipe' : 'inherit', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed: ${r.stderr ?? ''}${r.error ?? ''}`);
  return r.stdout ?? '';
}

/** The base commit's worktree, with its dependencies installed. */
function baseTree(): { dir: string; commit: string } {
  const commit = run('git', ['rev-parse', '--verify', `${baseRef}^{commit}`], REPO_ROOT).trim();
  const dir = join(ROOT, commit.slice(0, 12));
  if (!existsSync(join(dir, 'package.json'))) {
    mkdirSync(ROOT, { recursive: true });
    run('git', ['worktree', 'prune'], REPO_ROOT);
    run('git', ['worktree', 'add', '--detach', '--force', dir, commit], REPO_ROOT);
  }
  if (!existsSync(join(dir, 'node_modules'))) {
    const lock = (d: string) => readFileSync(join(d, 'package-lock.json'), 'utf8');
    if (
      lock(dir) === lock(REPO_ROOT) &&
      spawnSync('cp', ['-al', join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules')]).status === 0
    ) {
      process.stderr.write(`[pairs] ${commit.slice(0, 12)}: node_modules hard-linked (same lockfile)\n`);
    } else {
      process.stderr.write(`[pairs] ${commit.slice(0, 12)}: npm ci\n`);
      run('npm', ['ci', '--no-audit', '--no-fund'], dir, false);
    }
  }
  return { dir, commit };
}

/** The last top-level JSON object a benchmark printed (its report), or null. */
function lastReport(output: string): Record<string, unknown> | null {
  const end = output.lastIndexOf('\n}');
  if (end < 0) return null;
  for (let start = output.lastIndexOf('\n{\n', end); start >= 0; start = output.lastIndexOf('\n{\n', start - 1)) {
    try {
      return JSON.parse(output.slice(start + 1, end + 2)) as Record<string, unknown>;
    } catch {
      /* an inner object's brace: look further back */
    }
  }
  return null;
}

/** The figures compared, by name: bench:ingest's per mode; for another report, its numeric members (flattened, at most 40). */
function figures(report: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  const modes = (['allInOne', 'kafka'] as const).filter((m) => report[m]);
  if (modes.length > 0) {
    for (const m of modes) {
      const r = report[m] as Record<string, any>;
      out[`${m} calls/s`] = r.callsPerSec;
      out[`${m} CPU-µs per call`] = r.cpuMicrosPerCall;
      out[`${m} generator CPU-µs per call`] = r.driverCpuMicrosPerCall;
      out[`${m} p99 ack→queryable ms`] = r.ackToQueryableMs?.p99;
      out[`${m} share of the ceiling`] = r.ofDirectInsertCeiling ?? r.ofLowerCeiling;
    }
    return Object.fromEntries(Object.entries(out).filter(([, v]) => typeof v === 'number'));
  }
  const walk = (v: unknown, path: string) => {
    if (Object.keys(out).length >= 40) return;
    if (typeof v === 'number') out[path] = v;
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
  };
  walk(report, '');
  return out;
}

/**
 * bench:query's and bench:analytics' figures, read from their lines (they print no JSON report):
 * each query's (or export's) median and CPU (ms), and a stream read to the end's rows/s and rows per CPU-s.
 */
function queryLineFigures(output: string): Record<string, number> | null {
  const out: Record<string, number> = {};
  const num = (t: string) => Number(t.replaceAll(',', ''));
  const line = /^((?:stream|UI|count|threads|metrics|export): .*?)\s+median\s+(\d+) ms\s+(?:p95\s+\d+ ms\s+)?CPU\s+(\d+) ms.*$/gm;
  for (const m of output.matchAll(line)) {
    const name = m[1]!.trim();
    out[`${name}: median ms`] = num(m[2]!);
    out[`${name}: CPU ms`] = num(m[3]!);
    const rate = /([\d,]+) rows\/s \(best run\), ([\d,]+) rows per CPU-s/.exec(m[0]);
    if (rate) {
      out[`${name}: rows/s`] = num(rate[1]!);
      out[`${name}: rows per CPU-s`] = num(rate[2]!);
    }
  }
  return Object.keys(out).length ? out : null;
}

function runBench(dir: string, label: string, index: number): Record<string, number> {
  const started = Date.now();
  const r = spawnSync('npm', ['run', '-s', SCRIPT], { cwd: dir, encoding: 'utf8', maxBuffer: 256 << 20, env: process.env });
  const output = `${r.stdout ?? ''}\n${r.stderr ?? ''}`;
  const file = join(ROOT, 'runs', `${index}-${label}.log`);
  mkdirSync(join(ROOT, 'runs'), { recursive: true });
  writeFileSync(file, output);
  const report = r.status === 0 ? lastReport(r.stdout ?? '') : null;
  const figs = report ? figures(report) : r.status === 0 ? queryLineFigures(r.stdout ?? '') : null;
  if (!figs) throw new Error(`${SCRIPT} on ${label} gave no report (exit ${r.status}); its output: ${file}`);
  process.stderr.write(`[pairs] pair ${index} ${label}: ${Math.round((Date.now() - started) / 1000)} s\n`);
  return figs;
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : String(+n.toFixed(2)));

function main(): void {
  const base = baseTree();
  const head = run('git', ['rev-parse', '--short=12', 'HEAD'], REPO_ROOT).trim();
  const dirty = run('git', ['status', '--porcelain', '--untracked-files=no'], REPO_ROOT).trim() !== '';
  const headLabel = `${head}${dirty ? '+changes' : ''}`;
  process.stderr.write(`[pairs] ${SCRIPT}: ${PAIRS} pairs, base ${base.commit.slice(0, 12)} against ${headLabel}\n`);
  const rows: { base: Record<string, number>; head: Record<string, number> }[] = [];
  for (let i = 1; i <= PAIRS; i++) {
    // Base first in odd pairs, head first in even ones.
    const order = i % 2 === 1 ? (['base', 'head'] as const) : (['head', 'base'] as const);
    const got: Record<string, Record<string, number>> = {};
    for (const side of order) got[side] = runBench(side === 'base' ? base.dir : REPO_ROOT, side, i);
    rows.push({ base: got.base!, head: got.head! });
  }
  const names = Object.keys(rows[0]!.base).filter((k) => rows.every((r) => k in r.base && k in r.head));
  const lines = [
    `${SCRIPT}, ${PAIRS} alternated pairs: base ${base.commit.slice(0, 12)} → ${headLabel} (before → after, after/before)`,
    '',
    `| figure | ${rows.map((_, i) => `pair ${i + 1}`).join(' | ')} | median ratio |`,
    `|---|${rows.map(() => '---').join('|')}|---|`,
  ];
  for (const k of names) {
    const ratios = rows.map((r) => r.head[k]! / r.base[k]!).sort((a, b) => a - b);
    const median = ratios[Math.floor(ratios.length / 2)]!;
    const cells = rows.map((r) => `${fmt(r.base[k]!)} → ${fmt(r.head[k]!)} (×${(r.head[k]! / r.base[k]!).toFixed(2)})`);
    lines.push(`| ${k} | ${cells.join(' | ')} | ×${median.toFixed(2)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
