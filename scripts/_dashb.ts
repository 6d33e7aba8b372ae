import { startWeft, basicAuth, HARNESS_API_KEY, launchBrowser } from '@weft/harness';
const w = await startWeft({ dataDir: '/tmp/bench-an' });
const P = 'bench/analytics';
await new Promise((r) => setTimeout(r, 6000));
const browser = await launchBrowser();
try {
  await fetch(w.url + '/');
  for (let run = 0; run < 2; run++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(w.url + '/');
    await page.evaluate(`sessionStorage.setItem('weft.apiKey', ${JSON.stringify(HARNESS_API_KEY)})`);
    const t0 = performance.now();
    const log: string[] = [];
    page.on('request', (r) => { if (r.method() === 'POST') log.push(`${(performance.now() - t0).toFixed(0)} > ${new URL(r.url()).pathname} ${(r.postData() ?? '').slice(0, 110)}`); });
    page.on('requestfinished', (r) => { if (r.method() === 'POST') log.push(`${(performance.now() - t0).toFixed(0)} < ${new URL(r.url()).pathname}`); });
    await page.goto(`${w.url}/#/p/${P}/analytics`);
    await page.locator('.stat[data-stat="Calls"]').waitFor({ timeout: 300_000 });
    await page.waitForFunction(`(() => { const cs = [...document.querySelectorAll('figure.chart canvas')]; return cs.length === 6 && cs.every((c) => { const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++; return n > 500; }); })()`, undefined, { timeout: 300_000, polling: 100 });
    log.push(`${(performance.now() - t0).toFixed(0)} painted`);
    await page.waitForLoadState('networkidle');
    console.log(log.join('\n'));
    await page.close();
  }
} finally { await browser.close(); await w.stop(); }
