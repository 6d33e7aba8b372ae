import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { ENGINE_THREAD_POOL_SIZE } from '@weft/core';
import { embeddedSessionCount } from '../src/connection';
import { defaultLaneOptions } from '../src/lanes';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** How long a small interactive statement takes while four long ones hold the heavy and background lanes, in a process with `poolSize` threads. */
async function smallBesideLong(poolSize: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-pool-'));
  dirs.push(dir);
  const script = join(__dirname, 'fixtures', 'pool-busy.ts');
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, dir], {
    timeout: 120_000,
    env: { ...process.env, UV_THREADPOOL_SIZE: String(poolSize) },
  });
  return (JSON.parse(stdout.trim().split('\n').pop()!) as { smallMs: number }).smallMs;
}

/**
 * The embedded engine's statements run on Node's thread pool: with its default 4 threads, four
 * long statements in the heavy and background lanes leave none for a page's, which then waits
 * for one of them to end whatever its lane; with the pool weft is started with, it runs at once.
 */
it("a small statement does not wait for Node's thread pool behind the heavy and background lanes", async () => {
  expect(await smallBesideLong(4)).toBeGreaterThan(1_000);
  expect(await smallBesideLong(ENGINE_THREAD_POOL_SIZE)).toBeLessThan(1_000);
}, 180_000);

it('npm start, the benches and the image start with that pool, which holds every session of the default lanes', () => {
  expect(embeddedSessionCount(defaultLaneOptions())).toBeLessThanOrEqual(ENGINE_THREAD_POOL_SIZE);
  const root = join(__dirname, '..', '..', '..');
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const started = Object.entries(scripts).filter(([name]) => name === 'start' || name.startsWith('bench:'));
  expect(started.length).toBeGreaterThan(10);
  for (const [name, command] of started)
    expect(command, name).toMatch(new RegExp(`^UV_THREADPOOL_SIZE=\\$\\{UV_THREADPOOL_SIZE:-${ENGINE_THREAD_POOL_SIZE}\\} `));
  expect(readFileSync(join(root, 'Dockerfile'), 'utf8')).toMatch(new RegExp(`UV_THREADPOOL_SIZE=${ENGINE_THREAD_POOL_SIZE}\\b`));
});
