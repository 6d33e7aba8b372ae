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
    env: { WEFT_ALERTS_INTERVAL_MS: '500', WEFT_MONITORS_INTERVAL_MS: '0', WEFT_ALERTS_ALLOW_PRIVATE_URLS: '127.0.0.1' },
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

function slowCall(latencyMs: number) {
  const id = crypto.randomUUID();
  const end = Date.now();
  return {
    batch: [
      {
        mode: 'start',
        req: {
          start: {
            project_id: P,
            id,
            trace_id: id,
            op_name: `weave:///${P}/op/answer:1`,
            started_at: new Date(end - latencyMs).toISOString(),
            inputs: {},
            attributes: {},
          },
        },
      },
      { mode: 'end', req: { end: { project_id: P, id, ended_at: new Date(end).toISOString(), output: 'x', summary: {} } } },
    ],
  };
}

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
    await expect.poll(() => event.textContent(), { timeout: 10_000 }).toMatch(/slow-answers.*firing.*3000.*oncall: sent \(200\)/);
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
});
