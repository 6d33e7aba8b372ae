import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { REPO_ROOT, TEST_ROOT } from './helpers/paths';
import { startWeft, type RunningWeft } from './helpers/server';
import { ensureWeaveSdk, WEAVE_SDKS, weaveUserEnv } from './helpers/weave-sdk';

/**
 * The web UI in daily use (issue 37's defects, issue 36's SDK links), in a real headless
 * Chromium against the real all-in-one server: data written through the API as the SDK and OTLP
 * exporters write it, and by the real Weave Python SDK (test/weave-sdk/ui-links.py), whose
 * printed links are opened as a user would open them.
 */
let weft: RunningWeft;
let api: Client;
let member: Client;
let memberKey: TestKey;
let browser: Browser;
/** What the Weave SDK printed and wrote. */
let sdk: { output: string; links: string[]; datasetDigest: string; opDigest: string };

const D = 'daily/app';
const SDK_PROJECT = 'daily/sdk';
const ref = (op: string, digest: string) => `weave:///${D}/op/${op}:${digest}`;
const uuid = (n: number) => `0199dddd-0000-7000-8000-${String(n).padStart(12, '0')}`;
const BIG_INPUT_BYTES = 5 * 1024 * 1024;
const ids = {
  agentV1: uuid(1),
  agentV1Llm: uuid(2),
  agentV2: uuid(3),
  agentTools: uuid(4),
  big: uuid(5),
};
const OTEL_TRACE = '7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a';
const UI_TEST_MS = 240_000;
const until = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 20_000, interval: 100 });
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `daily-${name}.png`) });

async function seed(): Promise<void> {
  const t0 = Date.now() - 10 * 60_000;
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const calls = [
    { id: ids.agentV1, trace: 't-1', op: ref('agent', 'aaaa1111'), s: 0, e: 900, inputs: { question: 'What is 2 + 2?' } },
    { id: ids.agentV1Llm, trace: 't-1', parent: ids.agentV1, op: ref('llm', 'bbbb2222'), s: 100, e: 800, inputs: { q: '2 + 2' } },
    { id: ids.agentV2, trace: 't-2', op: ref('agent', 'cccc3333'), s: 1000, e: 1500, inputs: { question: 'And 3 + 3?' } },
    { id: ids.agentTools, trace: 't-3', op: ref('agent_tools', 'dddd4444'), s: 2000, e: 2100, inputs: {} },
    // Far larger than anything worth rendering in full.
    {
      id: ids.big,
      trace: 't-big',
      op: ref('summarize', 'eeee5555'),
      s: 3000,
      e: 3500,
      inputs: { document: 'lorem ipsum '.repeat(BIG_INPUT_BYTES / 12) },
    },
  ];
  const batch = calls.flatMap((c) => [
    {
      mode: 'start',
      req: {
        start: {
          project_id: D,
          id: c.id,
          trace_id: c.trace,
          parent_id: c.parent ?? null,
          op_name: c.op,
          started_at: at(c.s),
          inputs: c.inputs,
          attributes: {},
        },
      },
    },
    { mode: 'end', req: { end: { project_id: D, id: c.id, ended_at: at(c.e), output: 'ok', summary: {} } } },
  ]);
  const r = await member.post('/call/upsert_batch', { batch });
  expect(r.status, r.text).toBe(200);
  // OTLP: a gRPC server span (status unset) whose client child failed, and an HTTP span.
  const ns = (ms: number) => String(BigInt(t0 + 5000 + ms) * 1_000_000n);
  const span = (spanId: string, name: string, s: number, e: number, parent = '', status = {}) => ({
    traceId: OTEL_TRACE,
    spanId,
    parentSpanId: parent,
    name,
    kind: 1,
    startTimeUnixNano: ns(s),
    endTimeUnixNano: ns(e),
    attributes: [],
    status,
  });
  const otlp = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checker' } }] },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: [
              span('1111111111111111', 'grpc.server/Check', 0, 500),
              span('2222222222222222', 'grpc.client/Fetch', 50, 400, '1111111111111111', {
                code: 2,
                message: 'UNAVAILABLE: upstream down',
              }),
              { ...span('3333333333333333', 'http.get /health', 600, 700), traceId: '8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b' },
              // A model call under the server span: the root's own span carries no usage, its trace does.
              {
                ...span('4444444444444444', 'chat m-1', 100, 300, '1111111111111111'),
                attributes: [
                  { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
                  { key: 'gen_ai.request.model', value: { stringValue: 'm-1' } },
                  { key: 'gen_ai.usage.input_tokens', value: { intValue: 30 } },
                  { key: 'gen_ai.usage.output_tokens', value: { intValue: 12 } },
                ],
              },
            ],
          },
        ],
      },
    ],
  };
  const o = await member.post('/otel/v1/traces', otlp, { project_id: D });
  expect(o.status, o.text).toBe(200);
}

/** Runs one of test/weave-sdk/*.py with the SDK as a new user runs it (its own printing on); its output. */
async function runPython(script: string, key: string, args: string[] = []): Promise<string> {
  const python = await ensureWeaveSdk(WEAVE_SDKS[0]);
  const scratch = mkdtempSync(join(TEST_ROOT, 'ui-sdk-'));
  const env = weaveUserEnv({ scratch, baseUrl: weft.url, apiKey: key, project: SDK_PROJECT, printLinks: true });
  return new Promise<string>((resolve, reject) => {
    const child = spawn(python, [join(REPO_ROOT, 'test', 'weave-sdk', script), ...args], { cwd: scratch, env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${script} exited ${code}:\n${out.slice(-4000)}`));
    });
  });
}

/** test/weave-sdk/ui-links.py: the links the SDK printed, and what it wrote. */
async function runSdk(key: string): Promise<typeof sdk> {
  const output = await runPython('ui-links.py', key);
  const last = JSON.parse(output.trim().split('\n').pop()!) as { dataset_digest: string; op_digest: string };
  const links = [...new Set(output.match(new RegExp(`${weft.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[^\\s"']+`, 'g')) ?? [])];
  return { output, links, datasetDigest: last.dataset_digest, opDigest: last.op_digest };
}

beforeAll(async () => {
  // A 5 MiB input stored whole (the server's WEFT_MAX_VALUE_BYTES would store it truncated): the UI's own truncation is under test.
  weft = await startWeft({ env: { WEFT_MAX_VALUE_BYTES: '0' } });
  api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'daily' });
  await api.post('/admin/entities/create', { name: 'others' });
  memberKey = await createKey(api, 'daily-alice', ['daily']);
  member = clientFor(api, memberKey);
  const other = clientFor(api, await createKey(api, 'daily-bob', ['others']));
  await other.post('/call/start', {
    start: { project_id: 'others/secret', op_name: 'x', started_at: new Date().toISOString(), inputs: {}, attributes: {} },
  });
  await seed();
  [sdk, browser] = await Promise.all([runSdk(memberKey.key), launchBrowser()]);
}, 900_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
});

async function newPage(opts: BrowserContextOptions = {}): Promise<Page> {
  // A context of its own: a new tab's empty session storage, as a link opened from elsewhere.
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...opts });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  // The context goes with its page (closing it after the browser did is fine).
  page.on('close', () => context.close().catch(() => {}));
  return page;
}

/** Fills the sign-in form shown for whatever URL the page is on. */
async function signInHere(page: Page, key = memberKey.key): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function signedIn(opts: BrowserContextOptions = {}): Promise<Page> {
  const page = await newPage(opts);
  await page.goto(weft.url + '/');
  await signInHere(page);
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  return page;
}

const opCells = (page: Page) => page.locator('.vt-body .call-row .col-op').allTextContents();

describe('errors', () => {
  it(
    'no view sends more than a few requests after an error (403 of a foreign project, 400 of a bad $expr)',
    async () => {
      const page = await signedIn();
      let requests = 0;
      page.on('request', (r) => {
        if (r.method() === 'POST') requests++;
      });
      const views = [
        `/#/p/${D}/calls?expr=${encodeURIComponent('{"$regex": ["a"]}')}`,
        '/#/p/others/secret/calls',
        '/#/p/others/secret/trace/t-1',
        '/#/p/others/secret/call/x',
        '/#/p/others/secret/threads',
        '/#/p/others/secret/threads/th',
        '/#/p/others/secret/analytics',
        '/#/p/others/secret/objects',
        '/#/p/others/secret/objects/x',
        '/#/p/others/secret/table/x',
      ];
      for (const view of views) {
        requests = 0;
        await page.goto(weft.url + view);
        await until(() => page.getByRole('alert').first().textContent()).toMatch(/Error 40[03]/);
        // A view that retries on error keeps asking (it sent ~60 a second): give it time to show.
        await page.waitForTimeout(1500);
        expect(requests, view).toBeLessThanOrEqual(4);
        if (view.endsWith('/calls')) await shot(page, 'error-403');
      }
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('the Op filter', () => {
  it(
    'matches the names the table shows: a name finds every version of its op ref, name* a prefix, on OTLP names too',
    async () => {
      const page = await signedIn();
      await page.goto(weft.url + `/#/p/${D}/calls?roots=0`);
      const op = page.getByRole('textbox', { name: 'Op' });
      const filterBy = async (text: string) => {
        await op.fill(text);
        await op.press('Enter');
      };
      await filterBy('agent');
      await until(async () => (await opCells(page)).sort()).toEqual(['agent', 'agent']);
      await shot(page, 'op-filter');
      await filterBy('agent*');
      await until(async () => (await opCells(page)).sort()).toEqual(['agent', 'agent', 'agent_tools']);
      await filterBy('grpc*');
      await until(async () => (await opCells(page)).sort()).toEqual(['grpc.client/Fetch', 'grpc.server/Check']);
      await filterBy('grpc.server/Check, llm');
      await until(async () => (await opCells(page)).sort()).toEqual(['grpc.server/Check', 'llm']);
      // The full ref with its `:*` wildcard still works, as the interface's op_names.
      await filterBy(`weave:///${D}/op/agent:*`);
      await until(async () => (await opCells(page)).sort()).toEqual(['agent', 'agent']);
      // Analytics reads the same filter: its total is the calls of op agent.
      await page.goto(weft.url + `/#/p/${D}/analytics?op=agent`);
      await until(() => page.locator('.stat[data-stat="Calls"]').getAttribute('data-value')).toBe('2');
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('links', () => {
  it(
    'a shared trace link opened in a new tab asks for the key, then lands on the trace',
    async () => {
      const page = await newPage();
      await page.goto(weft.url + `/#/p/${D}/trace/t-1?call=${ids.agentV1Llm}`);
      await signInHere(page);
      await until(() => page.locator('.tree [role=treeitem][aria-selected=true]').getAttribute('data-call-id')).toBe(ids.agentV1Llm);
      expect(page.url()).toContain(`/trace/t-1`);
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'a key refused mid-session (revoked) asks for a key again, then goes back to where the user was',
    async () => {
      const doomed = await createKey(api, 'daily-carol', ['daily']);
      const page = await newPage();
      await page.goto(weft.url + '/');
      await signInHere(page, doomed.key);
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      expect((await api.post('/admin/keys/revoke', { key_id: doomed.key_id })).status).toBe(200);
      await page.goto(weft.url + `/#/p/${D}/trace/t-2`);
      await until(() => page.locator('.signin .notice').textContent()).toContain('Signed out');
      await signInHere(page);
      await until(() => page.locator('.tree [role=treeitem][aria-selected=true]').getAttribute('data-call-id')).toBe(ids.agentV2);
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'every link the Weave SDK prints opens its view after sign-in',
    async () => {
      const base = `${weft.url}/${SDK_PROJECT}`;
      const project = sdk.links.filter((l) => l === `${base}/weave`);
      const calls = sdk.links.filter((l) => l.startsWith(`${base}/r/call/`));
      const dataset = sdk.links.filter((l) => l === `${base}/weave/objects/arith/versions/${sdk.datasetDigest}`);
      const op = sdk.links.filter((l) => l === `${base}/weave/ops/agent/versions/${sdk.opDigest}`);
      expect({ project, dataset, op, calls: calls.length }, sdk.output).toEqual({
        project: [`${base}/weave`],
        dataset: [dataset[0]],
        op: [op[0]],
        calls: 2,
      });
      expect(sdk.links.length, sdk.output).toBe(5);

      // The project page: its calls.
      let page = await newPage();
      await page.goto(project[0]!);
      await signInHere(page);
      await until(async () => (await opCells(page)).sort()).toEqual(['agent', 'divide']);
      expect(page.url()).toContain(`#/p/${SDK_PROJECT}/calls`);
      await page.close();

      // Each call link: its trace with the call selected.
      for (const link of calls) {
        const id = link.split('/').pop()!;
        page = await newPage();
        await page.goto(link);
        await signInHere(page);
        await until(() => page.locator('.tree [role=treeitem][aria-selected=true]').getAttribute('data-call-id')).toBe(id);
        await page.close();
      }

      // The dataset's version, with its rows; the op's version.
      page = await newPage();
      await page.goto(dataset[0]!);
      await signInHere(page);
      await until(() => page.locator('.object-head h2').textContent()).toContain('arith');
      await until(() => page.locator('table.rows tbody tr').count()).toBe(2);
      expect(await page.locator('.version-list a[aria-current=true]').textContent()).toContain(sdk.datasetDigest.slice(0, 10));
      await shot(page, 'sdk-dataset');
      await page.goto(op[0]!);
      await until(() => page.locator('.object-head h2').textContent()).toContain('agent');
      expect(await page.locator('.object-head').textContent()).toContain('op');
      await page.getByRole('link', { name: /Calls of this version/ }).click();
      await until(async () => (await opCells(page)).sort()).toEqual(['agent']);
      await page.close();
    },
    UI_TEST_MS,
  );

  it('the server answers every SDK link shape with the UI page', async () => {
    for (const path of [
      `/${D}/weave`,
      `/${D}/weave/`,
      `/${D}/r/call/${ids.agentV1}`,
      `/${D}/weave/objects/arith/versions/abc`,
      `/${D}/weave/ops/agent/versions/abc`,
      `/${D}/weave/leaderboards/board`,
      `/${D}/weave/calls/${ids.agentV1}`,
    ]) {
      const r = await fetch(weft.url + path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type'), path).toContain('text/html');
      expect(await r.text(), path).toContain('<div id="app">');
    }
  });
});

describe('the call detail', () => {
  it(
    'shows a Weave SDK exception as `ValueError: …` with its traceback, and the op by its short name, linking to the op',
    async () => {
      const page = await signedIn();
      const [divide] = await member.jsonl('/calls/stream_query', {
        project_id: SDK_PROJECT,
        filter: { op_names: [`weave:///${SDK_PROJECT}/op/divide:*`] },
      });
      expect(JSON.parse(divide.exception).type).toBe('ValueError'); // as the SDK stores it: JSON
      await page.goto(weft.url + `/#/p/${SDK_PROJECT}/call/${divide.id}`);
      const exception = page.locator('.call-detail .exception');
      await until(() => exception.textContent()).toMatch(/^Traceback \(most recent call last\):/);
      const text = (await exception.textContent())!;
      expect(text).toContain('ValueError: cannot divide by zero');
      expect(text).toMatch(/File ".*ui-links\.py", line \d+, in divide\n\s+raise ValueError\("cannot divide by zero"\)/);
      await shot(page, 'exception');
      const opField = page.locator('.call-detail dl.facts dd').first();
      expect(await opField.textContent()).toBe('divide');
      await opField.getByRole('link').click();
      await until(() => page.locator('.object-head h2').textContent()).toContain('divide');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'shows an OTLP root whose child failed as "child error", and its trace’s usage as its total',
    async () => {
      const page = await signedIn();
      await page.goto(weft.url + `/#/p/${D}/trace/${OTEL_TRACE}`);
      const root = page.locator('.tree [role=treeitem]').first();
      await until(() => root.locator('.dot').getAttribute('class')).toContain('status-descendant_error');
      expect(await page.locator('.call-detail .detail-head .badge').textContent()).toBe('child error');
      // The trace's log records (an event of the model call's span, a plain line) under its waterfall; a span opens its call.
      const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
      const logs = await member.post(
        '/otel/v1/logs',
        {
          resourceLogs: [
            {
              resource: { attributes: [str('service.name', 'checker')] },
              scopeLogs: [
                {
                  scope: { name: 'test' },
                  logRecords: [
                    {
                      timeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
                      traceId: OTEL_TRACE,
                      spanId: '4444444444444444',
                      eventName: 'gen_ai.user.message',
                      body: { kvlistValue: { values: [str('content', 'is it up?')] } },
                    },
                    {
                      timeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
                      traceId: OTEL_TRACE,
                      spanId: '2222222222222222',
                      severityText: 'ERROR',
                      body: { stringValue: 'upstream refused the connection' },
                    },
                  ],
                },
              ],
            },
          ],
        },
        { project_id: D },
      );
      expect(logs.status, logs.text).toBe(200);
      await page.reload();
      const logRows = page.locator('.trace-logs .log-row');
      await until(() => logRows.count()).toBe(2);
      expect(await page.locator('.trace-logs summary').textContent()).toBe('Logs (2)');
      expect(await page.locator('.trace-logs').textContent()).toContain('upstream refused the connection');
      await page.locator('.trace-logs .log-row', { hasText: 'gen_ai.user.message' }).getByRole('button').click();
      await until(() => page.locator('.tree [aria-selected=true] .tree-label').textContent()).toBe('chat m-1');
      await shot(page, 'trace-logs');
      // The calls table says the same of the root (its stored status is success).
      await page.goto(weft.url + `/#/p/${D}/calls?trace=${OTEL_TRACE}&roots=1`);
      const badge = page.locator('.vt-body .call-row .col-status .badge');
      await until(() => badge.textContent()).toBe('child error');
      const [stored] = await member.jsonl('/calls/stream_query', {
        project_id: D,
        filter: { trace_ids: [OTEL_TRACE], trace_roots_only: true },
      });
      expect(stored.summary.weave.status).toBe('success');
      // The root's span carries no usage; its row shows its trace's (the model call's 30 + 12 tokens), marked Σ.
      expect(stored.summary.usage ?? {}).toEqual({});
      await until(() => page.locator('.vt-body .call-row .col-tokens').textContent()).toBe('Σ 42');
      // m-1 has no price: no cost to show.
      expect(await page.locator('.vt-body .call-row .col-cost').textContent()).toBe('—');
      await shot(page, 'child-error-table');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'opens a trace with a 5 MiB input fast: the input truncated, with "show all"',
    async () => {
      const page = await signedIn();
      const started = Date.now();
      await page.goto(weft.url + `/#/p/${D}/trace/t-big`);
      const inputs = page.locator('.call-detail details.section').filter({ hasText: 'Inputs' });
      await inputs.locator('.json-string').first().waitFor();
      const openMs = Date.now() - started;
      const shown = (await inputs.locator('.json-string').first().textContent())!.length;
      expect(shown).toBeLessThan(300 * 1024);
      expect(openMs).toBeLessThan(4000);
      await shot(page, 'big-input');
      await inputs.getByRole('button', { name: /Show all/ }).click();
      await until(async () => (await inputs.locator('.json-string').first().textContent())!.length).toBeGreaterThanOrEqual(
        BIG_INPUT_BYTES - 12,
      );
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'shows ops by their short names in the analytics op table',
    async () => {
      const page = await signedIn();
      await page.goto(weft.url + `/#/p/${D}/analytics`);
      const cells = page.locator('figure.chart.table tbody tr td:first-child');
      await until(() => cells.count()).toBeGreaterThan(3);
      const names = await cells.allTextContents();
      expect(names).toContain('agent');
      expect(names.filter((n) => n.startsWith('weave:'))).toEqual([]);
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('the calls table', () => {
  it(
    'shows roots only by default, and every call when unticked',
    async () => {
      const page = await signedIn();
      await page.goto(weft.url + `/#/p/${D}/calls`);
      // Roots: agent ×2, agent_tools, summarize, grpc.server/Check, http.get /health.
      await until(() => page.locator('.vt-body .call-row').count()).toBe(6);
      expect(await page.getByLabel('roots only').isChecked()).toBe(true);
      await page.getByLabel('roots only').uncheck();
      // And below them: agent's llm, grpc.client/Fetch, chat m-1.
      await until(() => page.locator('.vt-body .call-row').count()).toBe(9);
      expect(page.url()).toContain('roots=0');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'moves with the keyboard without a click first, in the table and in the trace',
    async () => {
      const page = await signedIn();
      await page.goto(weft.url + `/#/p/${D}/calls`);
      const rows = page.locator('.vt-body .call-row');
      await until(() => rows.count()).toBe(6);
      await page.keyboard.press('ArrowDown');
      await until(() => rows.nth(1).getAttribute('aria-selected')).toBe('true');
      const id = await rows.nth(1).getAttribute('data-call-id');
      await page.keyboard.press('Enter');
      await until(() => page.locator('.tree [role=treeitem][aria-selected=true]').getAttribute('data-call-id')).toBe(id);
      await page.goto(weft.url + `/#/p/${D}/trace/t-1`);
      await until(() => page.locator('.tree [role=treeitem][aria-selected=true]').getAttribute('data-call-id')).toBe(ids.agentV1);
      // As a user does: the next row is on screen before the key is pressed.
      await page.locator(`.tree [role=treeitem][data-call-id="${ids.agentV1Llm}"]`).waitFor();
      await page.keyboard.press('ArrowDown');
      await until(() => page.locator('.tree [role=treeitem][aria-selected=true]').getAttribute('data-call-id')).toBe(ids.agentV1Llm);
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'marks timestamps with their time zone',
    async () => {
      const page = await signedIn({ timezoneId: 'Asia/Kolkata' });
      await page.goto(weft.url + `/#/p/${D}/calls?op=agent_tools`);
      const cell = page.locator('.vt-body .call-row .col-started');
      await until(() => cell.count()).toBe(1);
      const [call] = await member.jsonl('/calls/stream_query', { project_id: D, filter: { call_ids: [ids.agentTools] } });
      const d = new Date(call.started_at);
      const local = new Date(d.getTime() + 5.5 * 3_600_000); // Kolkata: UTC+5:30, no daylight saving
      const p = (n: number) => String(n).padStart(2, '0');
      expect(await cell.textContent()).toBe(
        `${local.getUTCFullYear()}-${p(local.getUTCMonth() + 1)}-${p(local.getUTCDate())} ${p(local.getUTCHours())}:${p(local.getUTCMinutes())}:${p(local.getUTCSeconds())} GMT+5:30`,
      );
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('the page', () => {
  it(
    'has a favicon, and follows the system dark mode',
    async () => {
      const page = await newPage({ colorScheme: 'dark' });
      await page.goto(weft.url + '/');
      await page.getByLabel('API key').waitFor();
      const icon = await page.locator('link[rel=icon]').getAttribute('href');
      expect(icon).toBeTruthy();
      const decoded = await page.evaluate(
        `new Promise((resolve) => { const i = new Image(); i.onload = () => resolve(i.naturalWidth); i.onerror = () => resolve(0); i.src = ${JSON.stringify(icon)}; })`,
      );
      expect(decoded).toBeGreaterThan(0);
      const luminance = (page2: Page) =>
        page2.evaluate<number>(
          `(() => { const [r, g, b] = getComputedStyle(document.documentElement).backgroundColor.match(/\\d+/g).map(Number); return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; })()`,
        );
      expect(await luminance(page)).toBeLessThan(0.25);
      await signInHere(page);
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      await page.goto(weft.url + `/#/p/${D}/trace/t-1`);
      await page.locator('.call-detail').waitFor();
      await shot(page, 'dark-trace');
      const light = await newPage({ colorScheme: 'light' });
      await light.goto(weft.url + '/');
      await light.getByLabel('API key').waitFor();
      expect(await luminance(light)).toBeGreaterThan(0.85);
      await light.close();
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'lays out at 800 px: no horizontal overflow, the trace detail readable',
    async () => {
      const page = await signedIn({ viewport: { width: 800, height: 900 } });
      const views: [string, string, string][] = [
        ['calls', `/#/p/${D}/calls`, '.call-row'],
        ['trace', `/#/p/${D}/trace/t-1?call=${ids.agentV1Llm}`, '.call-detail'],
        ['analytics', `/#/p/${D}/analytics`, 'figure.chart.table tbody tr'],
        ['objects', `/#/p/${SDK_PROJECT}/objects/arith`, 'table.rows tbody tr'],
      ];
      for (const [name, path, ready] of views) {
        await page.goto(weft.url + path);
        await page.locator(ready).first().waitFor();
        await page.waitForLoadState('networkidle');
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow, name).toBeLessThanOrEqual(0);
        await shot(page, `w800-${name}`);
      }
      await page.goto(weft.url + `/#/p/${D}/trace/t-1?call=${ids.agentV1Llm}`);
      const box = await page.locator('.call-detail').boundingBox();
      expect(box!.width).toBeGreaterThanOrEqual(400);
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('annotation', () => {
  it(
    'thumbs up/down and notes from the UI are the feedback the Weave SDK reads; the calls table shows them',
    async () => {
      const [agent] = await member.jsonl('/calls/stream_query', {
        project_id: SDK_PROJECT,
        filter: { op_names: [`weave:///${SDK_PROJECT}/op/agent:*`] },
      });
      const callRef = `weave:///${SDK_PROJECT}/call/${agent.id}`;
      const stored = async () =>
        (await member.post('/feedback/query', { project_id: SDK_PROJECT })).body.result
          .filter((f: { weave_ref?: string; svc_ref?: string }) => (f.svc_ref ?? f.weave_ref) === callRef)
          .map((f: { feedback_type: string; payload: unknown }) => [f.feedback_type, f.payload]);
      const page = await signedIn();
      await page.goto(weft.url + `/#/p/${SDK_PROJECT}/call/${agent.id}`);
      const up = page.getByRole('button', { name: 'Thumbs up' });
      const down = page.getByRole('button', { name: 'Thumbs down' });
      // A toggle: on, then off again (the user's own reaction is purged).
      await up.click();
      await until(() => up.getAttribute('aria-pressed')).toBe('true');
      // The server adds the reference's normalised forms (alias, detoned) to the payload.
      expect(await stored()).toMatchObject([['wandb.reaction.1', { emoji: '👍' }]]);
      await up.click();
      await until(() => up.getAttribute('aria-pressed')).toBe('false');
      expect(await stored()).toEqual([]);
      await down.click();
      await until(() => down.getAttribute('aria-pressed')).toBe('true');
      await page.getByRole('textbox', { name: 'Note' }).fill('needs a source');
      await page.getByRole('button', { name: 'Add note' }).click();
      await until(() => page.locator('.call-detail .feedback li').count()).toBe(2);
      expect(await page.locator('.call-detail summary').filter({ hasText: 'Feedback' }).textContent()).toBe('Feedback (2)');
      await shot(page, 'annotation');
      expect((await stored()).sort()).toMatchObject([
        ['wandb.note.1', { note: 'needs a source' }],
        ['wandb.reaction.1', { emoji: '👎' }],
      ]);
      // Another call and back: the trace kept what was added.
      await page.keyboard.press('ArrowDown');
      await until(() => page.locator('.tree [role=treeitem][aria-selected=true]').getAttribute('data-call-id')).not.toBe(agent.id);
      await page.keyboard.press('ArrowUp');
      await until(() => page.locator('.call-detail .feedback li').count()).toBe(2);

      // The Weave SDK reads it: call.feedback, client.get_feedback(reaction=…).
      const read = JSON.parse((await runPython('read-feedback.py', memberKey.key, [agent.id])).trim().split('\n').pop()!);
      expect(read.call.map((f: { feedback_type: string; payload: unknown }) => [f.feedback_type, f.payload]).sort()).toMatchObject([
        ['wandb.note.1', { note: 'needs a source' }],
        ['wandb.reaction.1', { emoji: '👎' }],
      ]);
      expect(read.thumbs_down_refs).toEqual([callRef]);

      // The calls table's feedback column.
      await page.goto(weft.url + `/#/p/${SDK_PROJECT}/calls`);
      const cell = page.locator(`.vt-body .call-row[data-call-id="${agent.id}"] .col-feedback`);
      await until(() => cell.locator('.feedback-cell').getAttribute('data-feedback')).toBe('👎1 📝1');
      await shot(page, 'feedback-column');

      // The Feedback filter: exact per kind, from the feedback itself.
      const rows = page.locator('.vt-body .call-row');
      for (const [kind, expected] of [
        ['👎 thumbs down', [agent.id]],
        ['a note', [agent.id]],
        ['any feedback', [agent.id]],
      ] as const) {
        await page.getByLabel('Feedback').selectOption({ label: kind });
        await until(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-call-id')))).toEqual(expected);
        await until(() => page.locator('.table-meta').textContent()).toContain('1 call');
      }
      await page.getByLabel('Feedback').selectOption({ label: '👍 thumbs up' });
      await until(() => page.locator('.state.empty h3').textContent()).toBe('No calls have that feedback');
      expect(page.url()).toContain(`feedback=${encodeURIComponent('👍')}`);
      await page.close();
    },
    UI_TEST_MS,
  );
});
