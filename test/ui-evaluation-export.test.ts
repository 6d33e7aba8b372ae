import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { startWeft, type RunningWeft } from './helpers/server';
import { runWeaveScript } from './helpers/weave-sdk';

/**
 * Evaluation comparisons exported with their refs resolved (issue 53, item 3): two evaluations
 * written by the real Weave Python SDK (test/weave-sdk/evaluation-refs.py) whose models answer
 * with values read from a published object, so every stored output is a ref
 * (`…/object/lookup:<digest>/attr/table/key/France`). `/evaluations/export` (CSV, JSON, JSONL,
 * Parquet) holds the values those refs read to through /refs/read_batch (`Paris`), the stored ref
 * beside each; the compare view's Export menu, in a real headless Chromium, downloads the same
 * values the view shows. Expected values come from the API and from what the script says it
 * wrote, not from the export's code.
 */
let weft: RunningWeft;
let member: Client;
let memberKey: TestKey;
let outsider: Client;
let browser: Browser;

const P = 'caps/world';
const UI_TEST_MS = 240_000;
const until = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 20_000, interval: 100 });
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `evaluation-export-${name}.png`), fullPage: true });

interface Call {
  id: string;
  trace_id: string;
  parent_id: string | null;
  inputs: Record<string, unknown>;
  output: any;
}
/** What the SDK wrote: the runs' roots (right, then muddled) and their predict_and_score children. */
let right: Call;
let muddled: Call;
let children: Call[];
let capitals: Record<string, string>;
/** ref → value, as /refs/read_batch reads it. */
const read = new Map<string, unknown>();

/** What each model answered per country: right every capital; muddled Japan with Italy's, Peru with France's. */
const answered = (model: 'right' | 'muddled', country: string) =>
  capitals[model === 'muddled' ? ({ Japan: 'Italy', Peru: 'France' }[country] ?? country) : country]!;

/** RFC 4180 lines → records by header. */
function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  if (field || row.length) rows.push([...row, field]);
  const [header, ...body] = rows;
  return body.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

beforeAll(async () => {
  weft = await startWeft();
  const api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'caps' });
  await api.post('/admin/entities/create', { name: 'elsewhere' });
  memberKey = await createKey(api, 'caps-alice', ['caps']);
  member = clientFor(api, memberKey);
  outsider = clientFor(api, await createKey(api, 'caps-bob', ['elsewhere']));
  const [printed, launched] = await Promise.all([
    runWeaveScript<{ capitals: Record<string, string>; lookup_ref: string }>('evaluation-refs.py', [], {
      baseUrl: weft.url,
      apiKey: memberKey.key,
      project: P,
    }),
    launchBrowser(),
  ]);
  browser = launched;
  capitals = printed.capitals;
  const roots = await member.jsonl<Call>('/calls/stream_query', {
    project_id: P,
    filter: { op_names: [`weave:///${P}/op/Evaluation.evaluate:*`] },
    sort_by: [{ field: 'started_at', direction: 'asc' }],
  });
  expect(roots).toHaveLength(2);
  [right, muddled] = roots as [Call, Call];
  children = await member.jsonl<Call>('/calls/stream_query', {
    project_id: P,
    filter: { op_names: [`weave:///${P}/op/Evaluation.predict_and_score:*`] },
  });
  expect(children).toHaveLength(8);
  const refs = [...new Set(children.flatMap((c) => [c.output.output, c.inputs.example as string]))];
  const { vals } = (await member.post('/refs/read_batch', { refs })).body as { vals: unknown[] };
  refs.forEach((r, i) => read.set(r, vals[i]));
}, 900_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
});

/** The run (0 right, 1 muddled) and country of a predict_and_score call. */
const countryOf = (c: Call) => (read.get(c.inputs.example as string) as { country: string }).country;

describe('evaluation comparison exports (issue 53, item 3)', () => {
  it('the SDK stored every output as a ref into the lookup object, which /refs/read_batch reads to the capital', () => {
    for (const c of children) {
      const model = c.parent_id === right.id ? 'right' : 'muddled';
      const country = countryOf(c);
      expect(c.output.output).toMatch(new RegExp(`^weave:///${P}/object/lookup:[^/]+/attr/table/key/`));
      expect(read.get(c.output.output)).toBe(answered(model, country));
    }
  });

  it(
    '/evaluations/export: JSON, CSV, JSONL and Parquet hold the values, the stored refs beside them; regressions only; refusals',
    async () => {
      const body = { project_id: P, call_ids: [right.id, muddled.id] };
      const json = await member.post('/evaluations/export', { ...body, format: 'json' });
      expect(json.status).toBe(200);
      expect(json.headers.get('content-type')).toContain('application/json');
      expect(json.headers.get('content-disposition')).toBe('attachment; filename="caps-world-evaluations.json"');
      const doc = json.body;
      expect(doc.runs.map((r: any) => [r.call_id, r.model, r.baseline, r.summary['exact.correct.true_fraction']])).toEqual([
        [right.id, 'right', true, right.output.exact.correct.true_fraction],
        [muddled.id, 'muddled', false, muddled.output.exact.correct.true_fraction],
      ]);
      expect(doc.examples).toHaveLength(4);
      for (const e of doc.examples) {
        expect(e.example).toEqual(read.get(e.example_ref));
        for (const [i, model] of (['right', 'muddled'] as const).entries()) {
          const stored = children.find((c) => c.parent_id === [right.id, muddled.id][i] && c.inputs.example === e.example_ref)!;
          const result = e.results[i];
          expect(result.call_id).toBe(stored.id);
          expect(result.output).toBe(answered(model, e.example.country));
          expect(result.output).toBe(read.get(stored.output.output));
          expect(result.output_stored).toBe(stored.output.output);
          expect(result.scores).toEqual({ 'exact.correct': stored.output.scores.exact.correct });
        }
      }
      // No ref is left among the outputs.
      expect(JSON.stringify(doc.examples.map((e: any) => e.results.map((r: any) => r.output)))).not.toContain('weave:///');

      const csv = await member.post('/evaluations/export', { ...body, format: 'csv' });
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toContain('text/csv');
      const records = parseCsv(csv.text);
      expect(records).toHaveLength(8);
      expect(Object.keys(records[0]!)).toEqual([
        'example_key',
        'example.capital',
        'example.country',
        'example_ref',
        'run',
        'baseline',
        'model',
        'evaluation_call_id',
        'call_id',
        'trace_id',
        'output',
        'output_stored',
        'scores.exact.correct',
        'trials',
        'regressed',
        'exception',
      ]);
      for (const r of records) {
        const stored = children.find((c) => c.id === r.call_id)!;
        expect(r.output).toBe(answered(r.model as 'right' | 'muddled', r['example.country']!));
        expect(r.output).toBe(read.get(stored.output.output));
        expect(r.output_stored).toBe(stored.output.output);
        expect(r['scores.exact.correct']).toBe(String(stored.output.scores.exact.correct));
      }
      expect(records.filter((r) => r.regressed === 'true').map((r) => `${r.model} ${r['example.country']} ${r.output}`)).toEqual([
        'muddled Japan Rome',
        'muddled Peru Paris',
      ]);

      const jsonl = await member.jsonl<any>('/evaluations/export', { ...body, format: 'jsonl' });
      expect(jsonl.map((r) => [r.model, r.example.country, r.output])).toEqual(
        records.map((r) => [r.model, r['example.country'], r.output]),
      );
      const parquet = await fetch(`${weft.url}/evaluations/export`, {
        method: 'POST',
        headers: { authorization: member.authorization!, 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, format: 'parquet' }),
      });
      expect(parquet.status).toBe(200);
      expect(
        Buffer.from(await parquet.arrayBuffer())
          .subarray(0, 4)
          .toString(),
      ).toBe('PAR1');

      const regressions = await member.post('/evaluations/export', { ...body, format: 'json', regressions_only: true });
      expect(regressions.body.examples.map((e: any) => [e.example.country, e.results[1].output])).toEqual([
        ['Japan', 'Rome'],
        ['Peru', 'Paris'],
      ]);

      // An unknown run is a 404 naming it; another entity's project a 403; a fifth run a 422.
      const unknown = await member.post('/evaluations/export', { ...body, call_ids: [right.id, 'nope'], format: 'csv' });
      expect([unknown.status, unknown.body.field]).toEqual([404, 'call_ids[1]']);
      expect((await outsider.post('/evaluations/export', { ...body, format: 'csv' })).status).toBe(403);
      expect((await member.post('/evaluations/export', { ...body, call_ids: ['a', 'b', 'c', 'd', 'e'], format: 'csv' })).status).toBe(422);
    },
    UI_TEST_MS,
  );

  it(
    'the compare view shows the values and its Export menu downloads them (CSV and JSON)',
    async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      page.on('pageerror', (e) => console.error('page error:', e.message));
      await page.goto(`${weft.url}/#/p/${P}/evaluations/compare?runs=${right.id},${muddled.id}`);
      await page.getByLabel('API key').fill(memberKey.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await until(() => page.locator('tr.example-row').count()).toBe(4);
      // What the view shows per example and run.
      const shown = await page.locator('tr.example-row').evaluateAll((trs) =>
        trs.map((tr) => ({
          key: tr.getAttribute('data-example-key'),
          outputs: [...tr.querySelectorAll('td.result code.result-output')].map((c) => c.textContent),
        })),
      );
      for (const s of shown) expect(s.outputs.every((o) => o && !o.startsWith('weave:///'))).toBe(true);
      expect(shown.flatMap((s) => s.outputs).sort()).toEqual(
        Object.keys(capitals)
          .flatMap((c) => [answered('right', c), answered('muddled', c)])
          .sort(),
      );

      const menu = page.getByLabel('Export');
      expect(await menu.locator('option').allTextContents()).toEqual(['Export…', 'CSV', 'JSON', 'JSONL', 'Parquet']);
      const [csvDownload] = await Promise.all([page.waitForEvent('download'), menu.selectOption('csv')]);
      expect(csvDownload.suggestedFilename()).toBe('caps-world-evaluations.csv');
      const records = parseCsv(readFileSync((await csvDownload.path())!, 'utf8'));
      // The file's outputs are the view's, example by example and run by run.
      expect(shown.map((s) => [s.key, ...s.outputs])).toEqual(
        shown.map((s) => [s.key, ...records.filter((r) => r.example_key === s.key).map((r) => r.output)]),
      );
      expect(records.every((r) => r.output_stored!.startsWith(`weave:///${P}/object/lookup:`))).toBe(true);

      const [jsonDownload] = await Promise.all([page.waitForEvent('download'), menu.selectOption('json')]);
      const doc = JSON.parse(readFileSync((await jsonDownload.path())!, 'utf8'));
      expect(doc.examples.map((e: any) => [e.key, ...e.results.map((r: any) => r.output)])).toEqual(
        shown.map((s) => [s.key, ...s.outputs]),
      );

      // Regressions only: the export follows the view's filter.
      await page.getByLabel(/Regressions only/).check();
      await until(() => page.locator('tr.example-row').count()).toBe(2);
      const [regressed] = await Promise.all([page.waitForEvent('download'), menu.selectOption('csv')]);
      const rows = parseCsv(readFileSync((await regressed.path())!, 'utf8'));
      expect([...new Set(rows.map((r) => r['example.country']))].sort()).toEqual(['Japan', 'Peru']);
      await page.getByLabel(/Regressions only/).uncheck();
      await until(() => page.locator('tr.example-row').count()).toBe(4);
      // The menu open, for the screenshot.
      await menu.focus();
      await shot(page, 'compare');
      await context.close();
    },
    UI_TEST_MS,
  );
});
