import { randomUUID } from 'node:crypto';
import { existsSync, renameSync, rmSync } from 'node:fs';

/**
 * Installs something under .cache/ once, however many test files ask at the same time: each
 * builds in its own `<target>.build-<id>` and renames it into place, so an interrupted build
 * never looks finished. The first finished build wins; a later one is thrown away rather than
 * replacing the target, because another test file may already be running from it.
 * `complete(dir)` says whether a directory holds a finished install.
 */
export async function installAside(
  target: string,
  complete: (dir: string) => boolean,
  build: (dir: string) => Promise<void>,
): Promise<void> {
  if (complete(target)) return;
  const building = `${target}.build-${process.pid}-${randomUUID().slice(0, 8)}`;
  try {
    await build(building);
  } catch (err) {
    rmSync(building, { recursive: true, force: true });
    throw err;
  }
  if (complete(target)) {
    rmSync(building, { recursive: true, force: true });
    return;
  }
  // Left by an interrupted run of an older layout: nothing can be running from it.
  if (existsSync(target)) rmSync(target, { recursive: true, force: true });
  try {
    renameSync(building, target);
  } catch (err) {
    // Another build landed between the check and the rename.
    if (!complete(target)) throw err;
    rmSync(building, { recursive: true, force: true });
  }
}
