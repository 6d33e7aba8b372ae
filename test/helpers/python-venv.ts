import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installAside } from './install-aside';
import { REPO_ROOT } from './paths';

const run = promisify(execFile);

/**
 * A private virtualenv under .cache/ (gitignored) holding exactly `packages` (pinned
 * `name==version`), installed from PyPI on first use, so a fresh machine (CI) needs nothing
 * but python3 (see installAside). Run its tools as `python -m ...`, since the move leaves script shebangs pointing
 * at the build directory. Returns the venv's python.
 */
export async function ensurePythonVenv(name: string, packages: string[]): Promise<string> {
  const venv = join(REPO_ROOT, '.cache', name);
  const python = join(venv, 'bin', 'python3');
  const manifest = `${packages.join('\n')}\n`;
  await installAside(
    venv,
    (dir) => existsSync(join(dir, '.installed')),
    async (building) => {
      await run('python3', ['-m', 'venv', building]);
      await run(join(building, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', ...packages], { timeout: 600_000 });
      writeFileSync(join(building, '.installed'), manifest);
    },
  );
  return python;
}
