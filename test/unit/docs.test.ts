import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '@weft/core';
import { REPO_ROOT } from '../helpers/paths';
import { INSTRUMENTATION_CLIENTS, OPENLLMETRY_CLIENTS } from '../helpers/python-clients';

/**
 * The README is the front door and docs/ holds the rest: every relative link between them
 * resolves (file and heading), every page is reachable from the README, and every variable of
 * the configuration schema is documented exactly once, in docs/configuration.md.
 */
const README = join(REPO_ROOT, 'README.md');
const DOCS = join(REPO_ROOT, 'docs');
const pages = [
  README,
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(DOCS, f)),
];
const text = new Map(pages.map((p) => [p, readFileSync(p, 'utf8')]));

/** Markdown outside fenced code blocks (a `#` comment in a shell block is no heading, a `](x)` there no link). */
function prose(markdown: string): string {
  return markdown
    .split(/^```.*$/m)
    .filter((_, i) => i % 2 === 0)
    .join('\n');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const md = text.get(file) ?? readFileSync(file, 'utf8');
  return new Set([...prose(md).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

/** Every relative link target of a page: `[text](target)` and `![alt](target)`, web addresses left out. */
function linksOf(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/i.test(t));
}

describe('README and docs/', () => {
  it('keeps the README a front door (at most 150 lines)', () => {
    expect(text.get(README)!.split('\n').length).toBeLessThanOrEqual(150);
  });

  it('has every relative link resolve, to a file and (for #anchors) a heading in it', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const link of linksOf(text.get(page)!)) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? page : resolve(dirname(page), path);
        const where = `${relative(REPO_ROOT, page)} → ${link}`;
        if (!existsSync(target)) broken.push(`${where}: no such file`);
        else if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor)) broken.push(`${where}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
    expect(pages.length).toBeGreaterThan(10);
  });

  it('finds a broken link and a missing heading (the check itself works)', () => {
    expect(linksOf('see [a](docs/x.md#y), [b](https://example.com), `[c](z.md)`\n```\n[d](fenced.md)\n```')).toEqual([
      'docs/x.md#y',
      'z.md',
    ]);
    expect(anchorsOf(join(DOCS, 'operations.md')).has('overload-timeouts-and-health')).toBe(true);
    expect(anchorsOf(join(DOCS, 'operations.md')).has('no-such-heading')).toBe(false);
  });

  it("says how to change the port, and names one key variable (the CLI's WEFT_API_KEY) throughout (issue 53, item 7)", () => {
    const readme = text.get(README)!;
    expect(readme).toMatch(/PORT=\d+ npm start/);
    expect(readme).toContain('export WEFT_API_KEY=');
    // Every example that needs the key reads that variable; no other name for it.
    expect(readme).not.toMatch(/\$WEFT_KEY\b|api_key="weft_|WANDB_API_KEY=weft_/);
  });

  it('docs/otlp.md pins what the test suite installs for the instrumentations, and the valid capture values (issue 53, item 8)', () => {
    const otlp = text.get(join(DOCS, 'otlp.md'))!;
    const pins = [...INSTRUMENTATION_CLIENTS, ...OPENLLMETRY_CLIENTS].filter((p) => /instrumentation|util-genai|agents|httpx/.test(p));
    expect(pins.length).toBeGreaterThanOrEqual(6);
    for (const pin of pins) expect(otlp, pin).toContain(pin);
    for (const value of ['SPAN_ONLY', 'EVENT_ONLY', 'SPAN_AND_EVENT', 'gen_ai_latest_experimental']) expect(otlp).toContain(value);
  });

  it('links every docs/ page from the README', () => {
    const linked = new Set(linksOf(text.get(README)!).map((l) => resolve(REPO_ROOT, l.split('#')[0]!)));
    expect(pages.filter((p) => p !== README && !linked.has(p)).map((p) => relative(REPO_ROOT, p))).toEqual([]);
  });

  it('documents every configuration variable exactly once, in the table of docs/configuration.md', () => {
    const variables = Object.keys(configSchema.shape);
    expect(variables.length).toBeGreaterThan(50);
    const rows = (file: string, v: string) =>
      text
        .get(file)!
        .split('\n')
        .filter((line) => line.startsWith(`| \`${v}\` |`)).length;
    const configuration = join(DOCS, 'configuration.md');
    const wrong = variables.flatMap((v) => {
      const here = rows(configuration, v);
      const elsewhere = pages.filter((p) => p !== configuration && rows(p, v) > 0).map((p) => relative(REPO_ROOT, p));
      return here === 1 && elsewhere.length === 0 ? [] : [`${v}: ${here} rows in docs/configuration.md, also in [${elsewhere.join(', ')}]`];
    });
    expect(wrong).toEqual([]);
    // No row for a variable the schema does not have (a renamed or removed one).
    const documented = [...text.get(configuration)!.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]!);
    expect(documented.filter((v) => !variables.includes(v))).toEqual([]);
  });
});
