import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@weft/harness';
// The same table eslint.config.js enforces (no-restricted-imports); here it runs in `npm test`.
import { rules } from '../../scripts/boundaries.js';

/** Every file under `dir` (relative to the repo) whose name ends in one of `exts`, skipping node_modules. */
function filesUnder(dir: string, exts: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(join(REPO_ROOT, d))) {
      if (name === 'node_modules') continue;
      const rel = join(d, name);
      if (statSync(join(REPO_ROOT, rel)).isDirectory()) walk(rel);
      else if (exts.some((e) => rel.endsWith(e))) out.push(rel);
    }
  };
  walk(dir);
  return out;
}
/** Every TypeScript file under `dir`. */
const tsFiles = (dir: string) => filesUnder(dir, ['.ts']);
/** Every module under `dir`: TypeScript, the UI's TSX, and the plain modules run without tsx (bin/, worker shims). */
const moduleFiles = (dir: string) => filesUnder(dir, ['.ts', '.tsx', '.mjs']).filter((f) => !/\.d\.m?ts$/.test(f));

/** The module specifiers a file imports or re-exports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1] as string);
}

/** A glob of the rules table (`@weft/svc-*`, `**\/services/**`) against a specifier seen from `file`. */
function matches(pattern: string, specifier: string, file: string): boolean {
  if (pattern.startsWith('**/')) {
    if (!specifier.startsWith('.')) return false;
    const target = relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), specifier));
    // Within the file's own package (libs/<x>, services/<x>, tools/<x>, bench) anything goes.
    const own = file.startsWith('bench/') ? 'bench/' : `${file.split('/').slice(0, 2).join('/')}/`;
    if (target.startsWith(own)) return false;
    const folder = pattern.replace(/^\*\*\//, '').replace(/\/\*\*$/, '');
    return target === folder || target.startsWith(`${folder}/`);
  }
  if (pattern.endsWith('*')) return specifier.startsWith(pattern.slice(0, -1));
  return specifier === pattern || specifier.startsWith(`${pattern}/`);
}

/** As eslint reads a pattern list: forbidden when a pattern matches and no later `!pattern` allows it again. */
function isForbidden(patterns: string[], specifier: string, file: string): boolean {
  let forbidden = false;
  for (const p of patterns) {
    if (p.startsWith('!')) forbidden &&= !matches(p.slice(1), specifier, file);
    else forbidden ||= matches(p, specifier, file);
  }
  return forbidden;
}

const inScope = (globs: string[], file: string) => globs.some((g) => file.startsWith(g.replace(/\*\*$/, '')));
const packages = [
  ...['libs', 'services', 'tools'].flatMap((root) => readdirSync(join(REPO_ROOT, root)).map((name) => `${root}/${name}`)),
  'bench',
];
const sources = packages.flatMap((p) => tsFiles(p));
const modules = packages.flatMap((p) => moduleFiles(p));

describe('dependency rules', () => {
  for (const rule of rules) {
    it(rule.name, () => {
      const broken = modules
        .filter((file) => inScope(rule.files, file))
        .flatMap((file) =>
          importsOf(file)
            .filter((s) => isForbidden(rule.forbidden, s, file))
            .map((s) => `${file} imports ${s}`),
        );
      expect(broken, rule.why).toEqual([]);
    });
  }

  // Every product package states its statements through the Store's typed surface
  // (libs/store/src/statements.ts): only libs/store names the raw client or its package (the
  // bench, like the tests, may reach past it).
  const offTheClient = packages.filter((p) => p !== 'libs/store' && p !== 'bench');
  // A member `.client` in code (not inside a string or a comment: `gen_ai.client.…`, `http.client`).
  const codeOf = (line: string) =>
    line
      .replace(/^\s*(?:\*|\/\*|\/\/).*$/, '')
      .replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''")
      .replace(/\/\/.*$/, '');
  const rawClient = (line: string) => /['"]@clickhouse\/client['"]/.test(line) || /\.client\b/.test(codeOf(line));
  it('only libs/store touches the ClickHouse client', () => {
    const touching = sources
      .filter((file) => offTheClient.some((pkg) => file.startsWith(`${pkg}/`)) && !file.includes('/test/'))
      .flatMap((file) =>
        readFileSync(join(REPO_ROOT, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (rawClient(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(touching, 'use store.rows/row/streamRows/streamRaw/command/insertRows (libs/store statements.ts)').toEqual([]);
    expect(rawClient('const rs = await this.store.client.query({')).toBe(true);
    expect(rawClient("import type { ClickHouseClient } from '@clickhouse/client';")).toBe(true);
    expect(rawClient("import { postUpstream } from './upstream-client';")).toBe(false);
    expect(rawClient("  'gen_ai.client.inference.operation.details',")).toBe(false);
    expect(rawClient(" * closed under it (Python's http.client")).toBe(false);
  });

  // Each entity's SQL lives in its repository (ARCHITECTURE.md, "One repository per entity"): a
  // line of code (comments aside) naming one of its tables outside the files listed for it fails. Migrations (.sql) and tests are not scanned; the bench, like the tests, reaches
  // tables directly. `tables` matches a table's name wherever it is written; `inSql` only where
  // SQL or a statement names a table (FROM/JOIN/INTO/TABLE …, `table: '…'`, insertRows('…')),
  // for names that are also common words.
  const inSql = (...names: string[]) =>
    new RegExp(
      `\\b(?:FROM|JOIN|INTO|TABLE|EXISTS)\\s+(?:${names.join('|')})\\b|(?:table:\\s*|insertRows\\(\\s*)['"\`](?:${names.join('|')})['"\`]`,
    );
  const REPOSITORIES: { entity: string; tables: RegExp; files: string[] }[] = [
    {
      entity: 'calls',
      tables: /\b(?:calls_(?:starts|ends|deleted|renames)(?:_view|_output_view)?|call_parts)\b/,
      files: [
        'libs/query/src/repositories/calls.ts',
        // The agents view over the calls of OTLP spans (Weave 0.54's /agents/*).
        'libs/query/src/repositories/agents.ts',
        // The calls' read model: the query compiler and the plans beside it.
        'libs/query/src/calls.ts',
        'libs/query/src/threads.ts',
        'libs/query/src/own-usage.ts',
        // The search's narrowing by the text indexes (part of the compiler's conditions).
        'libs/query/src/search.ts',
        // Analytics: the planner over the catalogue, and the facts built from the calls.
        'libs/query/src/analytics/',
        // The call part: its row, encodings and insert (call_parts feeds the tables above).
        'libs/store/src/call-part',
        'libs/store/src/call-parts.ts',
      ],
    },
    { entity: 'costs', tables: /\bllm_token_prices\b/, files: ['libs/query/src/costs.ts', 'libs/query/src/analytics/facts.ts'] },
    { entity: 'OTLP log records', tables: /\botel_logs\b/, files: ['libs/query/src/repositories/otel-logs.ts'] },
    // The read model joins object versions (expanded refs) and feedback (feedback columns) into calls.
    { entity: 'objects', tables: inSql('object_versions'), files: ['libs/objects/src/objects.ts', 'libs/query/src/calls.ts'] },
    { entity: 'feedback', tables: inSql('feedback'), files: ['libs/objects/src/feedback.ts', 'libs/query/src/calls.ts'] },
    {
      entity: 'tables',
      tables: inSql('tables', 'table_rows', 'table_rows_index'),
      // The read model joins table rows too (expanded row refs: an evaluation's inputs.example).
      files: ['libs/objects/src/tables.ts', 'libs/objects/src/table-diff.ts', 'libs/query/src/calls.ts'],
    },
    { entity: 'files', tables: inSql('files'), files: ['libs/objects/src/files.ts'] },
    { entity: 'object aliases and tags', tables: inSql('object_aliases', 'object_tags'), files: ['libs/objects/src/object-labels.ts'] },
    { entity: 'dataset sources', tables: inSql('dataset_source_links'), files: ['libs/objects/src/dataset-sources.ts'] },
    { entity: 'project settings', tables: inSql('project_settings'), files: ['libs/objects/src/project-settings.ts'] },
    { entity: 'keys', tables: /\bweft_(?:api_keys|users|entities|memberships)\b/, files: ['libs/auth/src/key-store.ts'] },
    {
      entity: 'annotation queues',
      tables: inSql('annotation_queues', 'annotation_queue_items', 'annotator_queue_items_progress'),
      // A calls query may filter on a call's queue items (annotation_queue_items.queue_id).
      files: ['libs/objects/src/annotation-queues.ts', 'libs/query/src/call-fields.ts'],
    },
    // Entities one service uses (their repositories are in libs all the same: no SQL in services).
    { entity: 'deletion jobs', tables: inSql('deletion_jobs'), files: ['libs/query/src/repositories/deletion-jobs.ts'] },
    { entity: "dead letters' actions", tables: inSql('dead_letter_actions'), files: ['libs/ingest/src/dead-letter-actions.ts'] },
    {
      entity: 'evaluation runs',
      tables: inSql('evaluation_runs', 'evaluation_cancels'),
      files: ['libs/objects/src/evaluation-runs.ts'],
    },
    { entity: 'monitor leases', tables: inSql('monitor_leases'), files: ['libs/objects/src/monitors.ts'] },
    { entity: 'models', tables: inSql('models'), files: ['libs/objects/src/models.ts'] },
    {
      entity: 'alerts',
      tables: /\balert_(?:channels|states|events|deliveries|delivery_attempts|mutes|leases)\b/,
      files: ['libs/objects/src/alerts.ts'],
    },
  ];
  /** A line without its comment (a comment line, or a trailing `//` outside a string). */
  const withoutComment = (line: string) => {
    if (/^\s*(?:\*|\/\*|\/\/)/.test(line)) return '';
    // Strings blanked to the same length, so the first `//` left is a comment's.
    const blanked = line.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`/g, (m) => ' '.repeat(m.length));
    const at = blanked.indexOf('//');
    return at < 0 ? line : line.slice(0, at);
  };
  const productSources = sources.filter((file) => !file.startsWith('bench/') && !file.includes('/test/'));
  // The store names every table in its DDL (the sharding keys of the cluster form).
  const DDL = ['libs/store/src/cluster-ddl.ts', 'libs/store/src/migrate.ts'];
  for (const repo of REPOSITORIES) {
    it(`the SQL of ${repo.entity} is in its repository`, () => {
      const stray = productSources
        .filter((file) => ![...repo.files, ...DDL].some((f) => file.startsWith(f)))
        .flatMap((file) =>
          readFileSync(join(REPO_ROOT, file), 'utf8')
            .split('\n')
            .flatMap((line, i) => (repo.tables.test(withoutComment(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
        );
      expect(stray, `move these statements into ${repo.files[0]} (a function named for what it does)`).toEqual([]);
    });
  }
  it('catches SQL on a table (the matcher itself)', () => {
    const calls = REPOSITORIES[0]!.tables;
    expect(calls.test(withoutComment('      `SELECT DISTINCT trace_id FROM calls_starts WHERE project_id = {p:String}`,'))).toBe(true);
    expect(calls.test(withoutComment("  { table: 'calls_ends', where: `(project_id, id) IN (${CALLS})` },"))).toBe(true);
    expect(calls.test(withoutComment(' * the start rows of calls_starts name the calls'))).toBe(false);
    expect(calls.test(withoutComment('const a = 1; // from calls_starts'))).toBe(false);
    const feedback = inSql('feedback');
    expect(feedback.test('    `SELECT svc_ref FROM feedback WHERE project_id = ${pid}`')).toBe(true);
    expect(feedback.test("  { table: 'feedback', where: 'x' },")).toBe(true);
    expect(feedback.test("await store.insertRows('feedback', rows)")).toBe(true);
    expect(feedback.test("throw badRequest('feedback: too large', 'feedback')")).toBe(false);
  });

  // SQL only in repositories (ARCHITECTURE.md, "One repository per entity"): a service calls its
  // entities' repositories in libs, and no line of code under services/*/src (comments aside) is
  // SQL — a statement's keywords, a FROM/JOIN on a table or a subquery, or insertRows on a named table.
  const SQL_TEXT =
    /\b(?:SELECT|INSERT\s+INTO|ALTER\s+TABLE|DELETE\s+FROM|OPTIMIZE\s+TABLE|(?:CREATE|DROP|TRUNCATE)\s+TABLE|UNION\s+ALL|GROUP\s+BY|ORDER\s+BY)\b|\b(?:FROM|JOIN)\s+(?:[a-z_][\w.]*|\$\{|\()|\binsertRows\(\s*(?:['"`]|$)/;
  it('no SQL in services: it is in the repositories', () => {
    const sql = productSources
      .filter((file) => /^services\/[^/]+\/src\//.test(file))
      .flatMap((file) =>
        readFileSync(join(REPO_ROOT, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (SQL_TEXT.test(withoutComment(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(sql, "move these statements into their entity's repository in libs (a function named for what it does)").toEqual([]);
  });
  it('catches SQL text (the matcher itself)', () => {
    const sqlText = (line: string) => SQL_TEXT.test(withoutComment(line));
    expect(sqlText('    const sql = `SELECT count() AS n FROM ${table} WHERE ${where}`;')).toBe(true);
    expect(sqlText('      FROM alert_deliveries FINAL WHERE project_id = {p:String}')).toBe(true);
    expect(sqlText('        FROM (${plan.matchedCallsSql(p, cols)})`,')).toBe(true);
    expect(sqlText("    await store.insertRows('alert_leases', [{ name, owner }]);")).toBe(true);
    expect(sqlText('    await this.store.insertRows(')).toBe(true);
    expect(sqlText('  const sql = `SELECT')).toBe(true);
    expect(sqlText("import { callWindowSql } from '@weft/query';")).toBe(false);
    expect(sqlText(' * SELECT the calls FROM calls_starts')).toBe(false);
    expect(sqlText('const a = 1; // SELECT id FROM calls_starts')).toBe(false);
    expect(sqlText("    throw badRequest('select: pick a column from the list', 'select')")).toBe(false);
  });

  // "Packages export what their users need": every package names each export in src/index.ts
  // (typecheck then proves every user's import is there).
  // Every library, service and tool package: a package added later is checked without being listed.
  const NAMED_EXPORTS = packages.filter((p) => /^(libs|services|tools)\//.test(p));
  // Modules still re-exported whole, while their surface is being shaped (none now).
  const WHOLE: string[] = [];
  it('packages export by name', () => {
    const whole = NAMED_EXPORTS.flatMap((pkg) =>
      readFileSync(join(REPO_ROOT, pkg, 'src/index.ts'), 'utf8')
        .split('\n')
        .filter((line) => /^export \*/.test(line) && !WHOLE.includes(line.trim()))
        .map((line) => `${pkg}/src/index.ts: ${line}`),
    );
    expect(whole, 'name what other packages import: export { a, type B } from ...').toEqual([]);
  });

  // No import circles (type-only imports too): two files that need each other hold a piece that
  // belongs in a module both import, and a circle makes load order decide what is defined.
  // Packages are followed through their entry points, so a circle between packages counts too.
  const manifests = packages.map((p) => {
    const m = JSON.parse(readFileSync(join(REPO_ROOT, p, 'package.json'), 'utf8')) as { name: string; exports?: Record<string, string> };
    return { dir: p, name: m.name, exports: m.exports ?? {} };
  });
  const known = new Set(modules);
  /** The module file a specifier names, seen from `file` (undefined: outside the repo's packages). */
  const resolveImport = (specifier: string, file: string): string | undefined => {
    let base: string;
    if (specifier.startsWith('.')) base = relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), specifier));
    else {
      const pkg = manifests.find((m) => specifier === m.name || specifier.startsWith(`${m.name}/`));
      const entry = pkg?.exports[`.${specifier.slice(pkg.name.length)}`];
      if (!pkg || !entry) return undefined;
      base = join(pkg.dir, entry);
    }
    const candidates = [base, `${base}.ts`, `${base}.tsx`, `${base}.mjs`, base.replace(/\.js$/, '.ts'), join(base, 'index.ts')];
    return candidates.find((c) => known.has(c));
  };
  it('no import circles', () => {
    const graph = new Map(modules.map((f) => [f, [...new Set(importsOf(f).flatMap((s) => resolveImport(s, f) ?? []))]]));
    const circles = importCircles(graph).map((c) => c.join(' ↔ '));
    expect(circles, 'move what the files of a circle share into a small module they all import').toEqual([]);
  });
  it('catches an import circle (the finder itself)', () => {
    const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
    expect(importCircles(g({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] }))).toEqual([['a', 'b', 'c']]);
    expect(importCircles(g({ a: ['a'], b: ['a'] }))).toEqual([['a']]);
    expect(importCircles(g({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
    expect(resolveImport('../calls', 'libs/query/src/repositories/calls.ts')).toBe('libs/query/src/calls.ts');
    expect(resolveImport('@weft/core', 'libs/query/src/calls.ts')).toBe('libs/core/src/index.ts');
    expect(resolveImport('./ingest-worker.mjs', 'libs/ingest/src/ingest-workers.ts')).toBe('libs/ingest/src/ingest-worker.mjs');
    expect(resolveImport('zod', 'libs/query/src/calls.ts')).toBeUndefined();
  });

  it('catches a forbidden import (the matcher itself)', () => {
    expect(matches('@weft/svc-*', '@weft/svc-gateway', 'libs/x/src/a.ts')).toBe(true);
    expect(matches('@weft/store', '@weft/store', 'libs/bus/src/a.ts')).toBe(true);
    expect(matches('**/test/**', '../test/helpers/client', 'bench/a.ts')).toBe(true);
    expect(matches('**/services/**', '../../../services/query/src/x', 'libs/a/src/b.ts')).toBe(true);
    expect(matches('**/services/**', './service-things', 'libs/a/src/b.ts')).toBe(false);
    expect(matches('**/services/**', './routes', 'services/query/src/role.ts')).toBe(false);
    expect(matches('**/services/**', '../../gateway/src/calls', 'services/inference/src/x.ts')).toBe(true);
    expect(isForbidden(['@weft/svc-*', '!@weft/svc-ui'], '@weft/svc-ui', 'services/query/src/role.ts')).toBe(false);
    expect(isForbidden(['@weft/svc-*', '!@weft/svc-ui'], '@weft/svc-gateway', 'services/query/src/role.ts')).toBe(true);
  });

  it('every package declares the workspace packages it imports, and no others', () => {
    const names = new Map(
      packages.map((p) => [p, (JSON.parse(readFileSync(join(REPO_ROOT, p, 'package.json'), 'utf8')) as { name: string }).name]),
    );
    const problems: string[] = [];
    for (const pkg of packages) {
      const manifest = JSON.parse(readFileSync(join(REPO_ROOT, pkg, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      const declared = new Set(
        Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((d) => d.startsWith('@weft/')),
      );
      const used = new Set(
        tsFiles(pkg)
          .flatMap(importsOf)
          .filter((s) => s.startsWith('@weft/'))
          .map((s) => s.split('/').slice(0, 2).join('/')),
      );
      used.delete(names.get(pkg) as string);
      for (const u of used) if (!declared.has(u)) problems.push(`${pkg} imports ${u} without declaring it`);
      for (const d of declared) if (!used.has(d)) problems.push(`${pkg} declares ${d} but does not import it`);
    }
    expect(problems).toEqual([]);
  });
});

/**
 * The import graph's circles: its strongly connected components of more than one file, or of a
 * file importing itself (Tarjan's algorithm), each sorted.
 */
function importCircles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) circles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}
