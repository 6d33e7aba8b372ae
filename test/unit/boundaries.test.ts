import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@weft/harness';
// The same table eslint.config.js enforces (no-restricted-imports); here it runs in `npm test`.
import { rules } from '../../scripts/boundaries.js';

/** Every TypeScript file under `dir` (relative to the repo), skipping node_modules. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(join(REPO_ROOT, d))) {
      if (name === 'node_modules') continue;
      const rel = join(d, name);
      if (statSync(join(REPO_ROOT, rel)).isDirectory()) walk(rel);
      else if (rel.endsWith('.ts')) out.push(rel);
    }
  };
  walk(dir);
  return out;
}

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

describe('dependency rules', () => {
  for (const rule of rules) {
    it(rule.name, () => {
      const broken = sources
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
