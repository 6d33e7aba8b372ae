import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { startWeft, type RunningWeft } from './helpers/server';
import { runWeaveScript } from './helpers/weave-sdk';

/**
 * Datasets curated and calls views saved in the web UI (issue 37, points 3 and 6, and the calls
 * table's user names, live refresh), in a real headless Chromium against the real all-in-one
 * server, on what the real Weave Python SDK wrote (test/weave-sdk/ui-datasets.py). What the UI
 * writes is read back through the SDK (test/weave-sdk/read-back.py): `weave.ref(uri).get()` for
 * datasets, `SavedView.load(uri)` for views. Expected values come from the API, not the UI's code.
 */
let weft: RunningWeft;
let api: Client;
let member: Client;
let memberKey: TestKey;
let bobKey: TestKey;
let browser: Browser;
/** What the SDK wrote. */
let sdk: { qa: string; big: string; view: string; view_url: string };

const P = 'data/app';
const UI_TEST_MS = 240_000;
const until = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 20_000, interval: 100 });
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `datasets-${name}.png`), fullPage: true });

interface Call {
  id: string;
  op_name: string;
  trace_id: string;
  inputs: Record<string, unknown>;
  output: Record<string, unknown>;
  svc_user_id: string;
}
type Row = Record<string, unknown>;

/** The six `answer` calls the SDK traced, oldest first. */
const answers = () =>
  member.jsonl<Call>('/calls/stream_query', {
    project_id: P,
    filter: { op_names: [`weave:///${P}/op/answer:*`] },
    sort_by: [{ field: 'started_at', direction: 'asc' }],
  });

/** A dataset's rows as the SDK reads them. */
const sdkDataset = (uri: string) =>
  runWeaveScript<{ name: string; class: string; rows: Row[] }>('read-back.py', ['dataset', uri], {
    baseUrl: weft.url,
    apiKey: memberKey.key,
    project: P,
  });

/** A dataset version's rows through the API. */
async function apiRows(objectId: string, digest = 'latest'): Promise<{ digest: string; rows: Row[] }> {
  const obj = (await member.post('/obj/read', { project_id: P, object_id: objectId, digest })).body.obj;
  const table = String(obj.val.rows).split('/').pop();
  const r = await member.post('/table/query', { project_id: P, digest: table });
  return { digest: obj.digest, rows: r.body.rows.map((x: { val: Row }) => x.val) };
}

beforeAll(async () => {
  weft = await startWeft();
  api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'data' });
  memberKey = await createKey(api, 'data-alice', ['data']);
  bobKey = await createKey(api, 'data-bob', ['data']);
  member = clientFor(api, memberKey);
  // A call written with the admin key (a user who is no member of the entity).
  const now = new Date().toISOString();
  await api.post('/call/upsert_batch', {
    batch: [
      {
        mode: 'start',
        req: {
          start: {
            project_id: P,
            id: 'admin-call',
            trace_id: 'admin-trace',
            op_name: 'admin_op',
            started_at: now,
            inputs: {},
            attributes: {},
          },
        },
      },
      { mode: 'end', req: { end: { project_id: P, id: 'admin-call', ended_at: now, output: 'ok', summary: {} } } },
    ],
  });
  [sdk, browser] = await Promise.all([
    runWeaveScript<typeof sdk>('ui-datasets.py', [], { baseUrl: weft.url, apiKey: memberKey.key, project: P }),
    launchBrowser(),
  ]);
}, 900_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  page.on('close', () => context.close().catch(() => {}));
  return page;
}

/** A new tab on `path`, signed in there (sign-in keeps the URL). */
async function signedIn(path: string, key = memberKey.key): Promise<Page> {
  const page = await newPage();
  await page.goto(weft.url + path);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}

const rowIds = (page: Page) => page.locator('.vt-body .call-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-call-id')));

describe('datasets', () => {
  it(
    'adds calls picked in the calls table to a new dataset, and to the SDK’s dataset as its next version; the SDK reads the rows back',
    async () => {
      const calls = await answers();
      expect(calls).toHaveLength(6);
      const page = await signedIn(`/#/p/${P}/calls?op=answer&sort=started_at:asc`);
      await until(() => rowIds(page)).toEqual(calls.map((c) => c.id));
      const pick = async (ids: string[]) => {
        for (const id of ids) await page.locator(`.call-row[data-call-id="${id}"] input[type=checkbox]`).check();
        await until(() => page.locator('.selection strong').textContent()).toBe(`${ids.length} selected`);
        await page.getByRole('button', { name: 'Add to dataset…' }).click();
        return page.getByRole('dialog', { name: 'Add to dataset' });
      };

      // A new dataset of three calls: each input a column, the output renamed `expected`.
      let dialog = await pick(calls.slice(0, 3).map((c) => c.id));
      const names = () => dialog.locator('.mapping input').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
      await until(names).toEqual(['question', 'context', 'output']);
      await dialog.getByLabel('Name', { exact: true }).fill('from-calls');
      await dialog.getByLabel('Column 3 name').fill('expected');
      await shot(page, 'add-new');
      await dialog.getByRole('button', { name: 'Create dataset with 3 rows' }).click();
      await until(() => page.locator('.notice').textContent()).toContain('Added 3 rows to from-calls');
      expect(await page.locator('.selection').count()).toBe(0);
      const made = await sdkDataset(`weave:///${P}/object/from-calls:latest`);
      expect(made.class).toBe('Dataset');
      expect(made.name).toBe('from-calls');
      expect(made.rows).toEqual(
        calls.slice(0, 3).map((c) => ({ question: c.inputs.question, context: c.inputs.context, expected: c.output })),
      );

      // Two more into the SDK's `qa` (columns question, answer): mapped by name, its next version.
      const before = await apiRows('qa');
      dialog = await pick(calls.slice(3, 5).map((c) => c.id));
      await dialog.getByLabel('Dataset', { exact: true }).selectOption('qa');
      await until(names).toEqual(['answer', 'question']);
      const sources = await dialog
        .locator('.mapping select')
        .evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
      expect(sources).toEqual(['output.answer', 'inputs.question']);
      await shot(page, 'add-existing');
      await dialog.getByRole('button', { name: 'Add 2 rows as a new version' }).click();
      await until(() => page.locator('.notice').textContent()).toContain('Added 2 rows to qa');
      const expected = [...before.rows, ...calls.slice(3, 5).map((c) => ({ answer: c.output.answer, question: c.inputs.question }))];
      expect((await sdkDataset(`weave:///${P}/object/qa:latest`)).rows).toEqual(expected);
      // The version the SDK published is as it was.
      expect((await sdkDataset(sdk.qa)).rows).toEqual(before.rows);

      // The notice links to the new version: 4 rows, v1 the latest.
      await page.locator('.notice a').click();
      await until(() => page.locator('table.rows tbody tr').count()).toBe(4);
      expect(await page.locator('.object-head h2').textContent()).toBe('qa v1');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'edits and deletes rows as a new version the SDK reads; the diff of the two versions shows the changed and the removed row',
    async () => {
      const before = await apiRows('qa');
      expect(before.rows.length).toBeGreaterThanOrEqual(3);
      const page = await signedIn(`/#/p/${P}/objects/qa`);
      await until(() => page.locator('table.rows tbody tr').count()).toBe(before.rows.length);
      await page.getByRole('button', { name: 'Edit row 0' }).click();
      await page.getByLabel('Row 0 answer').fill('four');
      await page.getByLabel('Row 0 answer').press('Enter');
      await page.getByRole('button', { name: 'Delete row 1' }).click();
      await until(() => page.locator('.edit-bar strong').textContent()).toBe('1 edited, 1 deleted');
      expect(await page.locator('tr[data-row-index="0"]').getAttribute('class')).toContain('edited');
      expect(await page.locator('tr[data-row-index="1"]').getAttribute('class')).toContain('deleted');
      await shot(page, 'edit');
      await page.getByRole('button', { name: 'Save as new version' }).click();
      await until(() => page.url()).toContain('?v=');
      const after = await apiRows('qa');
      expect(after.digest).not.toBe(before.digest);
      expect(page.url()).toContain(`v=${after.digest}`);
      const expected = [{ ...before.rows[0], answer: 'four' }, ...before.rows.slice(2)];
      expect((await sdkDataset(`weave:///${P}/object/qa:latest`)).rows).toEqual(expected);
      await until(() => page.locator('table.rows tbody tr').count()).toBe(expected.length);

      // Compared with the version before: row 0 changed (its answer), row 1 removed.
      await page.getByLabel('Compare with version').selectOption(before.digest);
      await until(() => page.locator('.diff-summary').getAttribute('data-changed')).toBe('1');
      const summary = page.locator('.diff-summary');
      expect([await summary.getAttribute('data-added'), await summary.getAttribute('data-removed')]).toEqual(['0', '1']);
      const changed = page.locator('tr.diff-row.changed');
      expect(await changed.count()).toBe(1);
      expect(await changed.locator('td.cell-changed').evaluateAll((tds) => tds.map((td) => td.getAttribute('data-column')))).toEqual([
        'answer',
      ]);
      expect(await changed.locator('td.cell-changed .before').textContent()).toBe(String(before.rows[0]!.answer));
      expect(await changed.locator('td.cell-changed .after').textContent()).toBe('four');
      const removed = page.locator('tr.diff-row.removed');
      expect(await removed.count()).toBe(1);
      expect(await removed.locator('td').nth(1).textContent()).toBe('1');
      expect(await removed.textContent()).toContain(String(before.rows[1]!.question));
      expect(page.url()).toContain(`/objects/qa/diff?base=${before.digest}&v=${after.digest}`);
      await shot(page, 'diff');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'pages a 100,000-row dataset: the total, a jump to the last row, columns in the order of the stored rows',
    async () => {
      const page = await signedIn(`/#/p/${P}/objects/big`);
      const rows = page.locator('table.rows tbody tr');
      await until(() => rows.count()).toBe(25);
      await until(() => page.locator('.pager').textContent()).toContain('of 100,000');
      // The header's columns: the keys of the rows in the order the API gives them (as the SDK reads them).
      const obj = (await member.post('/obj/read', { project_id: P, object_id: 'big', digest: 'latest' })).body.obj;
      const table = String(obj.val.rows).split('/').pop();
      const [first] = (await member.post('/table/query', { project_id: P, digest: table, limit: 1 })).body.rows;
      expect(await page.locator('table.rows thead th').allTextContents()).toEqual(['#', ...Object.keys(first.val), 'Edit']);
      const started = Date.now();
      await page.getByLabel('Go to row').fill('99999');
      await page.getByLabel('Go to row').press('Enter');
      await until(() => rows.last().locator('td').first().textContent()).toBe('99999');
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await rows.count()).toBe(25);
      expect(await rows.first().textContent()).toContain('row 99975');
      expect(await page.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
      expect(page.url()).toContain('page=3999');
      await shot(page, 'big-last-page');
      await page.getByLabel('Rows a page').selectOption('500');
      await until(() => rows.count()).toBe(500);
      expect(await rows.last().locator('td').first().textContent()).toBe('99999');
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('saved views', () => {
  it(
    'saves the filter, sort and columns as a SavedView, reopened by its URL (and the SDK’s link form); the SDK reads it and gets the same calls',
    async () => {
      const path = `/#/p/${P}/calls?op=answer&status=success&sort=summary.weave.latency_ms:asc&hide=tokens,cost`;
      const page = await signedIn(path);
      await until(async () => (await rowIds(page)).length).toBe(6);
      const shown = await rowIds(page);
      expect(await page.locator('.vt-head .col-tokens').count()).toBe(0);
      // One more column hidden from the Columns menu.
      await page.locator('.columns-menu summary').click();
      await page.getByRole('group', { name: 'Columns shown' }).getByLabel('Display name').uncheck();
      await until(() => page.url()).toContain(`hide=${encodeURIComponent('name,tokens,cost')}`);
      expect(await page.locator('.vt-head .col-name').count()).toBe(0);
      await page.getByRole('button', { name: 'Save view…' }).click();
      await page.getByLabel('View name').fill('Fast answers');
      await page.getByRole('button', { name: 'Save view', exact: true }).click();
      await until(() => page.url()).toContain('view=traces-fast-answers');
      await until(() => page.locator('.views-bar select option:checked').textContent()).toBe('Fast answers');
      await shot(page, 'view-saved');
      await page.close();

      // Opened by its URL in a new tab: the filter, the sort, the columns and the rows are back.
      for (const url of [`/#/p/${P}/calls?view=traces-fast-answers`, `/${P}/weave/traces?view=traces-fast-answers`]) {
        const again = await signedIn(url);
        await until(() => rowIds(again)).toEqual(shown);
        expect(await again.getByRole('textbox', { name: 'Op' }).inputValue()).toBe('answer');
        expect(await again.locator('select[name=status]').inputValue()).toBe('success');
        expect(await again.locator('.vt-head .col-latency').getAttribute('aria-sort')).toBe('ascending');
        expect(await again.locator('.vt-head .col-tokens').count()).toBe(0);
        expect(await again.locator('.vt-head .col-cost').count()).toBe(0);
        expect(await again.locator('.vt-head .col-name').count()).toBe(0);
        expect(await again.locator('.vt-head .col-user').count()).toBe(1);
        expect(await again.getByLabel('Saved view').inputValue()).toBe('traces-fast-answers');
        expect(await again.locator('.chip.modified').count()).toBe(0);
        expect(again.url()).toContain('sort=summary.weave.latency_ms%3Aasc');
        await again.close();
      }

      // The SDK reads the view and its calls are the ones the UI showed.
      const read = await runWeaveScript<{
        label: string;
        view_type: string;
        filter: Record<string, unknown>;
        sort_by: unknown[];
        columns: string[][];
        call_ids: string[];
      }>('read-back.py', ['view', `weave:///${P}/object/traces-fast-answers:latest`], {
        baseUrl: weft.url,
        apiKey: memberKey.key,
        project: P,
      });
      expect(read.label).toBe('Fast answers');
      expect(read.view_type).toBe('traces');
      expect(read.filter.op_names).toEqual(['answer', `weave:///${P}/op/answer:*`]);
      expect(read.sort_by).toEqual([{ field: 'summary.weave.latency_ms', direction: 'asc' }]);
      expect(read.columns.map((c) => c.join('.'))).toEqual([
        'op_name',
        'summary.weave.status',
        'started_at',
        'summary.weave.latency_ms',
        'feedback',
        'wb_user_id',
      ]);
      expect([...read.call_ids].sort()).toEqual([...shown].sort());
    },
    UI_TEST_MS,
  );

  it(
    'opens the view the SDK saved (its printed link), marks a changed filter as modified and saves it as the next version',
    async () => {
      const calls = await answers();
      const page = await signedIn(new URL(sdk.view_url).pathname + new URL(sdk.view_url).search);
      await until(() => rowIds(page)).toEqual(calls.map((c) => c.id));
      expect(await page.getByRole('textbox', { name: 'Op' }).inputValue()).toBe(`weave:///${P}/op/answer:*`);
      expect(await page.locator('.vt-head .col-started').getAttribute('aria-sort')).toBe('ascending');
      expect(await page.locator('.views-bar select option:checked').textContent()).toBe('Answers, oldest first');
      // Newest first now: the view is modified, saved as its next version.
      await page.locator('.vt-head .col-started button').click();
      await until(() => rowIds(page)).toEqual(calls.map((c) => c.id).reverse());
      await until(() => page.locator('.chip.modified').count()).toBe(1);
      await shot(page, 'view-modified');
      await page.locator('.views-bar .view-name').getByRole('button', { name: 'Save' }).click();
      await until(() => page.locator('.chip.modified').count()).toBe(0);
      const viewId = sdk.view.split('/').pop()!.split(':')[0]!;
      const versions = (await member.post('/objs/query', { project_id: P, filter: { object_ids: [viewId] } })).body.objs;
      expect(versions).toHaveLength(2);
      const latest = versions.find((v: { is_latest: number }) => v.is_latest);
      expect(latest.val.definition.sort_by).toEqual([{ field: 'started_at', direction: 'desc' }]);
      expect(latest.val.label).toBe('Answers, oldest first');
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('the calls table', () => {
  it(
    'names users weft knows (members of the entity), and shows other ids short',
    async () => {
      const [admin] = await member.jsonl<Call>('/calls/stream_query', { project_id: P, filter: { call_ids: ['admin-call'] } });
      const [answer] = await answers();
      expect(answer!.svc_user_id).toBe(memberKey.user_id);
      const page = await signedIn(`/#/p/${P}/calls?roots=0`);
      const user = (id: string) => page.locator(`.call-row[data-call-id="${id}"] .col-user span`);
      await until(() => user(answer!.id).textContent()).toBe('data-alice');
      expect(await user(answer!.id).getAttribute('title')).toBe(memberKey.user_id);
      expect(await user('admin-call').textContent()).toBe(`${admin!.svc_user_id.slice(0, 9)}…`);
      expect(await user('admin-call').getAttribute('title')).toBe(admin!.svc_user_id);
      await shot(page, 'user-names');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'refreshes live when asked (a bounded number of requests), and stops at the first error',
    async () => {
      const bob = clientFor(api, bobKey);
      const page = await signedIn(`/#/p/${P}/calls`, bobKey.key);
      const rows = page.locator('.vt-body .call-row');
      await until(() => rows.count()).toBeGreaterThan(0);
      let requests = 0;
      // The table's requests; the lag banner's own read every 10 s (/project/delivery) is not the live refresh's.
      let bannerReads = 0;
      page.on('request', (r) => {
        if (r.method() !== 'POST') return;
        if (new URL(r.url()).pathname === '/project/delivery') bannerReads++;
        else requests++;
      });
      // Off by default: nothing is asked while the page sits.
      await page.waitForTimeout(6000);
      expect(requests).toBe(0);
      await page.getByLabel('Live').check();
      const since = Date.now();
      const now = new Date().toISOString();
      await bob.post('/call/upsert_batch', {
        batch: [
          {
            mode: 'start',
            req: {
              start: {
                project_id: P,
                id: 'fresh-call',
                trace_id: 'fresh',
                op_name: 'fresh_op',
                started_at: now,
                inputs: {},
                attributes: {},
              },
            },
          },
          { mode: 'end', req: { end: { project_id: P, id: 'fresh-call', ended_at: now, output: 'ok', summary: {} } } },
        ],
      });
      await until(() => rows.first().getAttribute('data-call-id')).toBe('fresh-call');
      await page.waitForTimeout(Math.max(0, 16_000 - (Date.now() - since)));
      // Two requests a poll, every 5 s (and the names and child errors of a changed first page).
      expect(requests).toBeGreaterThanOrEqual(4);
      expect(requests).toBeLessThanOrEqual(12);
      await shot(page, 'live');

      // Bob leaves the entity: the next poll gets 403, shown; live refresh stops.
      expect((await api.post('/admin/entities/remove_member', { entity: 'data', user: 'data-bob' })).status).toBe(200);
      await until(() => page.getByRole('alert').first().textContent()).toMatch(/Error 403/);
      requests = 0;
      bannerReads = 0;
      await page.waitForTimeout(11_000);
      expect(requests).toBe(0);
      // The banner's read is refused too, once, and not asked again.
      expect(bannerReads).toBeLessThanOrEqual(1);
      await page.close();
    },
    UI_TEST_MS,
  );
});
