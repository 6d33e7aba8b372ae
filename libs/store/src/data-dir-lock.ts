import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive, StartupError } from '@weft/core';

/** The file naming the process that has a data dir's embedded engine open. */
export const DATA_DIR_OWNER_FILE = 'weft.pid';

/**
 * Takes `dataDir` for this process before the embedded engine opens it, so a second weft on
 * the same directory stops with one line naming it instead of the engine's lock-failure trace.
 * A file left by a process that is gone (killed) is stale and taken over. Returns the release.
 */
export function claimDataDir(dataDir: string): () => void {
  const file = join(dataDir, DATA_DIR_OWNER_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const owner = Number(readOwner(file));
    // An empty file is one being written by a process starting at this very moment.
    const starting = !(owner > 0) && attempt < 20;
    if (starting) {
      sleepMs(25);
      continue;
    }
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processAlive(owner)) {
      throw new StartupError(
        `data dir ${dataDir} is in use by another weft process (pid ${owner}): stop it, or set WEFT_DATA_DIR to another directory (remove ${file} if that process is not a weft)`,
      );
    }
    rmSync(file, { force: true });
  }
}

function readOwner(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
