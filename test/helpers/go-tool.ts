import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { installAside } from './install-aside';
import { REPO_ROOT } from './paths';

const run = promisify(execFile);

/**
 * A Go command installed from the Go module proxy into .cache/bin/<name>@<version>/ (gitignored)
 * on first use, so a fresh machine (CI) needs nothing but Go (see installAside). Returns the binary's path.
 */
export async function ensureGoTool(pkg: string, version: string, timeoutMs = 1_800_000): Promise<string> {
  const name = basename(pkg);
  const dir = join(REPO_ROOT, '.cache', 'bin', `${name}@${version}`);
  const bin = join(dir, name);
  await installAside(
    dir,
    (d) => existsSync(join(d, name)),
    async (building) => {
      // -trimpath: the same binary whatever the checkout's path. nice: the build (minutes, every
      // core) yields to the test files running beside it.
      await run('nice', ['-n', '10', 'go', 'install', '-trimpath', `${pkg}@${version}`], {
        env: { ...process.env, GOBIN: building },
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      });
    },
  );
  return bin;
}
