import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * The web UI's Alerts tab in a real headless Chromium against the real all-in-one server: a
 * newcomer adds a webhook channel and an alert with the forms, a slow call makes it fire, and the
 * page shows the state, the figure's sparkline against the threshold, and the event's delivery
 * to the receiver (a real HTTP server on 127.0.0.1).
 */
const P = 'uialert/app';
let weft: RunningWeft;
let member: Client;
let key: TestKey;
let browser: Browser;
let receiver: Server;
const got: any[] = [];
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `alerts-${name}.png`), fullPage: true });

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      got.push(JSON.parse(body));
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  // The receiver is on 127.0.0.1: a loopback address, allowed explicitly (docs/alerts.md, "Channel URLs").
  weft = await startWeft({
    env: { WEFT_ALERTS_INTERVAL_MS: '500', WEFT_MONITORS_INTERVAL_MS: '300', WEFT_ALERTS_ALLOW_PRIVATE_URLS: '127.0.0.1' },
  });
  const api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'uialert' });
  key = await createKey(api, 'ui-oncall', ['uialert']);
  member = clientFor(api, key);
  browser = await launchBrowser();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

/** A call of `answer` in `project` that ended now, after `latencyMs`, with `output`. */
function slowCall(latencyMs: number, project = P, output: unknown = 'x', op = 'answer:1') {
  const id = crypto.randomUUID();
  const end = Date.now();
  return {
    batch: [
      {
        mode: 'start',
        req: {
          start: {
            project_id: project,
            id,
            trace_id: id,
            op_name: `weave:///${project}/op/${op}`,
            started_at: new Date(end - latencyMs).toISOString(),
            inputs: {},
            attributes: {},
          },
        },
      },
      { mode: 'end', req: { end: { project_id: project, id, ended_at: new Date(end).toISOString(), output, summary: {} } } },
    ],
  };
}

async function ok(path: string, body: unknown): Promise<any> {
  const r = await member.post(path, body);
  if (r.status !== 200) throw new Error(`${path} → ${r.status} ${r.text}`);
  return r.body;
}

async function signedIn(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(weft.url + '/');
  await page.getByLabel('API key').fill(key.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
  return page;
}

const BASES = { _class_name: 'AlertSpec', _bases: ['BaseObject', 'BaseModel'] };

describe('alerts in the UI', () => {
  it("adds a channel and an alert with the forms; a slow call fires it: state, sparkline, delivery; a chart's link fills the form", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.on('pageerror', (e) => console.error('page error:', e.message));
    await page.goto(weft.url + '/');
    await page.getByLabel('API key').fill(key.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    await page.goto(`${weft.url}/#/p/${P}/alerts`);
    await page.getByRole('heading', { name: 'Alerts' }).waitFor();
    await page.getByText('No alerts yet').waitFor();

    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const channelForm = page.getByRole('form', { name: 'New channel' });
    await channelForm.getByLabel('Channel name').fill('oncall');
    await channelForm.getByLabel('Webhook URL').fill(url);
    await channelForm.getByRole('button', { name: 'Add channel' }).click();
    await page.locator('table.alert-channels tr', { hasText: 'oncall' }).waitFor();
    await page.getByRole('button', { name: 'Send a test' }).click();
    await expect.poll(() => got.length, { timeout: 10_000 }).toBe(1);
    expect(got[0]).toMatchObject({ state: 'test', project_id: P });

    await page.getByRole('button', { name: 'New alert' }).click();
    const form = page.getByRole('form', { name: 'New alert' });
    await form.getByLabel('Name').fill('slow-answers');
    await form.getByLabel(/^Metric/).fill('latency');
    await form.getByLabel('Aggregation').selectOption('max');
    await form.getByLabel('When').selectOption('GREATER_THAN');
    await form.getByLabel('Threshold').fill('1000');
    await form.getByLabel('Last N calls').fill('1');
    await form.getByRole('button', { name: 'Create alert' }).click();
    const row = page.locator('table.alerts tr[data-alert="slow-answers"]');
    await row.waitFor();
    expect(await row.locator('td').nth(2).textContent()).toBe('max(latency) > 1000 · last 1 calls');

    // Fast calls, then a slow one: ok, then firing, delivered once.
    for (const ms of [100, 200]) {
      expect((await member.post('/call/upsert_batch', slowCall(ms))).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1200));
    }
    expect((await member.post('/call/upsert_batch', slowCall(3000))).status).toBe(200);
    await expect.poll(() => got.filter((g) => g.state === 'firing').length, { timeout: 15_000 }).toBe(1);
    expect(got.at(-1)).toMatchObject({ alert: 'slow-answers', value: 3000, threshold: 1000 });
    await page.reload();
    await row.locator('.badge.alert-firing').waitFor();
    expect(await row.locator('td').nth(3).textContent()).toBe('3000');
    expect(await row.locator('svg.sparkline polyline').count()).toBe(1);
    const event = page.locator('table.alert-events tbody tr').first();
    // The delivery's outcome is recorded once the webhook has answered, which may be after the
    // page above was loaded: a person reloads to see it, and so does this poll.
    await expect
      .poll(
        async () => {
          const text = await event.textContent();
          if (text?.includes('pending')) await page.reload();
          return text;
        },
        { timeout: 15_000, interval: 500 },
      )
      .toMatch(/slow-answers.*firing.*3000.*oncall: sent \(200\)/);
    await shot(page, 'firing');

    // Mute from the page: shown, and kept by the server.
    await row.getByRole('button', { name: 'Mute 1 h' }).click();
    await row.getByText(/muted until/).waitFor();
    const listed = (await member.post('/alerts/list', { project_id: P })).body.alerts[0];
    expect(listed.muted_until).not.toBeNull();

    // "Alert me" on an analytics chart opens the form filled in from its metric.
    await page.goto(`${weft.url}/#/p/${P}/analytics`);
    await page.getByRole('link', { name: 'Alert on Latency p50 / p99' }).click();
    const prefilled = page.getByRole('form', { name: 'New alert' });
    await prefilled.waitFor();
    expect(await prefilled.getByLabel(/^Metric/).inputValue()).toBe('latency');
    expect(await prefilled.getByLabel('Aggregation').inputValue()).toBe('p50');
    expect(await prefilled.getByLabel('When').inputValue()).toBe('GREATER_THAN');
  }, 180_000);

  it('edits an alert: each save publishes a new version of its AlertSpec, keeping what the form does not show, and weft evaluates that version', async () => {
    const E = 'uialert/edit';
    // Published over the API as the SDK stores it, with a description and an extra key (hysteresis) the form does not show.
    await ok('/obj/create', {
      obj: {
        project_id: E,
        object_id: 'slow',
        val: {
          _type: 'AlertSpec',
          name: 'slow',
          description: 'answers too slow',
          op_scope: null,
          spec: {
            alert_condition: 'THRESHOLD',
            source_type: 'calls',
            metric_path: 'latency',
            aggregation_function: 'max',
            comparison_operator: 'GREATER_THAN',
            threshold: 1000,
            window_size: 1,
            hysteresis: 100,
          },
          ...BASES,
        },
      },
    });
    await ok('/call/upsert_batch', slowCall(3000, E));
    const listed = async () => (await ok('/alerts/list', { project_id: E })).alerts[0];
    await expect.poll(async () => (await listed())?.state, { timeout: 15_000 }).toBe('firing');

    const page = await signedIn();
    await page.goto(`${weft.url}/#/p/${E}/alerts`);
    const row = page.locator('table.alerts tr[data-alert="slow"]');
    await row.getByRole('button', { name: 'Edit slow' }).click();
    const form = page.getByRole('form', { name: 'Edit alert slow' });
    await form.waitFor();
    // Filled in from the alert as weft reads it; its name is not editable (a new version of the same object).
    expect(await form.getByLabel('Name').inputValue()).toBe('slow');
    expect(await form.getByLabel('Name').getAttribute('readonly')).not.toBeNull();
    expect(await form.getByLabel(/^Metric/).inputValue()).toBe('latency');
    expect(await form.getByLabel('Aggregation').inputValue()).toBe('max');
    expect(await form.getByLabel('When').inputValue()).toBe('GREATER_THAN');
    expect(await form.getByLabel('Threshold').inputValue()).toBe('1000');
    expect(await form.getByLabel('Last N calls').inputValue()).toBe('1');
    expect(await form.getByLabel(/^Op refs/).inputValue()).toBe('');

    // Threshold, aggregation, window and op scope changed: the figure (3000, the one call) is now
    // well under the threshold, so the worker, reading the new version, resolves it.
    await form.getByLabel('Threshold').fill('5000');
    await form.getByLabel('Aggregation').selectOption('mean');
    await form.getByLabel('Last N calls').fill('2');
    await form.getByLabel(/^Op refs/).fill(`weave:///${E}/op/answer:*`);
    await shot(page, 'edit-form');
    await form.getByRole('button', { name: 'Save new version' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(() => row.locator('td').nth(2).textContent()).toBe('mean(latency) > 5000 · last 2 calls · op answer:*');
    const versions = async () =>
      (await ok('/objs/query', { project_id: E, filter: { object_ids: ['slow'] }, sort_by: [{ field: 'created_at', direction: 'asc' }] }))
        .objs;
    expect(await versions()).toHaveLength(2);
    const v2 = (await versions())[1];
    expect(v2.val).toMatchObject({
      name: 'slow',
      description: 'answers too slow',
      op_scope: [`weave:///${E}/op/answer:*`],
      spec: {
        alert_condition: 'THRESHOLD',
        metric_path: 'latency',
        aggregation_function: 'mean',
        comparison_operator: 'GREATER_THAN',
        threshold: 5000,
        window_size: 2,
        window_duration: null,
        hysteresis: 100,
      },
      _class_name: 'AlertSpec',
    });
    expect((await listed()).alert_ref).toBe(`weave:///${E}/object/slow:${v2.digest}`);
    await expect.poll(async () => (await listed()).state, { timeout: 15_000 }).toBe('resolved');
    await page.reload();
    await row.locator('.badge.alert-resolved').waitFor();

    // The operator flipped: below 5000 now fires again.
    await row.getByRole('button', { name: 'Edit slow' }).click();
    expect(await form.getByLabel('Aggregation').inputValue()).toBe('mean');
    expect(await form.getByLabel(/^Op refs/).inputValue()).toBe(`weave:///${E}/op/answer:*`);
    await form.getByLabel('When').selectOption('LESS_THAN');
    await form.getByRole('button', { name: 'Save new version' }).click();
    await form.waitFor({ state: 'detached' });
    expect(await versions()).toHaveLength(3);
    await expect.poll(async () => (await listed()).state, { timeout: 15_000 }).toBe('firing');
    const events = (await ok('/alerts/events/query', { project_id: E })).events;
    expect(events.map((e: any) => e.state)).toEqual(['firing', 'resolved', 'firing']);
    expect(events[0].body).toMatchObject({
      comparison_operator: 'LESS_THAN',
      threshold: 5000,
      aggregation: 'mean',
      alert_ref: `weave:///${E}/object/slow:${(await versions())[2].digest}`,
    });
    await page.reload();
    await row.locator('.badge.alert-firing').waitFor();
    expect(await row.locator('td').nth(2).textContent()).toBe('mean(latency) < 5000 · last 2 calls · op answer:*');
    await shot(page, 'edited');
    await page.context().close();
  }, 180_000);

  it("a monitor's scorer: its 🔔 opens the form with monitor_ref and scorer_ref filled in; the alert fires on the scores", async () => {
    const M = 'uialert/judged';
    await ok('/alerts/channels/create', {
      project_id: M,
      name: 'judges',
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    });
    const obj = async (object_id: string, val: Record<string, unknown>) =>
      `weave:///${M}/object/${object_id}:${(await ok('/obj/create', { obj: { project_id: M, object_id, val } })).digest}`;
    const scorer = await obj('ValidJSONScorer', {
      _type: 'ValidJSONScorer',
      _class_name: 'ValidJSONScorer',
      _bases: ['Scorer', 'Object', 'BaseModel'],
    });
    const monitor = await obj('json-check', {
      _type: 'Monitor',
      name: 'json-check',
      active: true,
      op_names: [`weave:///${M}/op/reply:v1`],
      sampling_rate: 1,
      scorers: [scorer],
      _class_name: 'Monitor',
      _bases: ['Object', 'BaseModel'],
    });
    // Valid JSON, scored by weft's monitor worker: results to read the score's path from.
    for (let i = 0; i < 4; i++) await ok('/call/upsert_batch', slowCall(5, M, '{"a": 1}', 'reply:v1'));
    await expect.poll(async () => (await ok('/feedback/query', { project_id: M })).result.length, { timeout: 20_000 }).toBe(4);

    const page = await signedIn();
    await page.goto(`${weft.url}/#/p/${M}/monitors`);
    await page.getByRole('link', { name: 'Alert on ValidJSONScorer' }).waitFor();
    await shot(page, 'monitor-bell');
    await page.getByRole('region', { name: 'Monitor json-check' }).getByRole('link', { name: 'Alert on ValidJSONScorer' }).click();
    const form = page.getByRole('form', { name: 'New alert' });
    await form.waitFor();
    expect(await form.getByLabel('Monitor', { exact: true }).inputValue()).toBe(monitor);
    expect(await form.getByLabel(/^Scorer/).inputValue()).toBe(scorer);
    expect(await form.getByLabel(/^Metric/).inputValue()).toBe('output.json_valid');
    expect(await form.getByLabel('Aggregation').inputValue()).toBe('mean');
    expect(await form.getByLabel('When').inputValue()).toBe('LESS_THAN');
    expect(await form.getByLabel(/^Op refs/).count()).toBe(0); // a monitor's scores: no op scope
    await form.getByLabel('Name').fill('json-broken');
    await form.getByLabel('Threshold').fill('0.5');
    await form.getByLabel('Last N scores').fill('4');
    await shot(page, 'monitor-form');
    await form.getByRole('button', { name: 'Create alert' }).click();
    const row = page.locator('table.alerts tr[data-alert="json-broken"]');
    await row.waitFor();
    expect(await row.locator('td').nth(2).textContent()).toBe(
      'mean(output.json_valid) < 0.5 · last 4 scores · monitor json-check / ValidJSONScorer',
    );
    const listed = async () => (await ok('/alerts/list', { project_id: M })).alerts[0];
    expect(await listed()).toMatchObject({ monitor_ref: monitor, scorer_ref: scorer, invalid: null, op_scope: null });
    await expect.poll(async () => (await listed()).value, { timeout: 15_000 }).toBe(1);

    // Three broken outputs among the last four scores: mean 0.25, under 0.5 → firing, delivered.
    for (let i = 0; i < 3; i++) await ok('/call/upsert_batch', slowCall(5, M, 'not json', 'reply:v1'));
    await expect.poll(() => got.filter((g) => g.alert === 'json-broken').length, { timeout: 20_000 }).toBe(1);
    expect(got.find((g) => g.alert === 'json-broken')).toMatchObject({
      state: 'firing',
      project_id: M,
      value: 0.25,
      window: { size: 4, calls: 4 },
    });
    // The form filled in from the monitor's link closed, and its parameters left the URL.
    expect(await page.getByRole('form', { name: 'New alert' }).count()).toBe(0);
    expect(page.url()).toBe(`${weft.url}/#/p/${M}/alerts`);
    await page.reload();
    await row.locator('.badge.alert-firing').waitFor();
    expect(await page.getByRole('form', { name: 'New alert' }).count()).toBe(0);
    await shot(page, 'monitor-firing');
    await page.context().close();
  }, 180_000);
});
