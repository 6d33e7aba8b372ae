import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const dataDir = mkdtempSync(join(tmpdir(), 'weft-close-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/**
 * A process exiting while the embedded engine still runs a statement waits in the engine's
 * teardown for it, outside any deadline of ours: the store's close waits for it instead, so the
 * exit after it is prompt.
 */
it('closes after the statements the engine still runs, so the process exits at once', async () => {
  const script = join(__dirname, 'fixtures', 'close-during-statement.ts');
  const started = Date.now();
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, dataDir], { timeout: 120_000 });
  const exitedAt = Date.now();
  const { closeMs, closedAt } = JSON.parse(stdout) as { closeMs: number; closedAt: number };
  // The statement outlived its abort by a good part of a second or more, and close waited for it.
  expect(closeMs).toBeGreaterThan(300);
  // The exit then took no engine time (process teardown and the child's pipes only).
  expect(exitedAt - closedAt).toBeLessThan(Math.max(1000, closeMs / 2));
  expect(exitedAt - started).toBeLessThan(120_000);
});
