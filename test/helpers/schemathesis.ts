import { execFile } from 'node:child_process';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './paths';

const run = promisify(execFile);

/** Pinned so every machine fuzzes with the same generator. */
export const SCHEMATHESIS_VERSION = '4.32.5';

/**
 * The command line running schemathesis from a private virtualenv under .cache/ (gitignored),
 * installed from PyPI on first use, so a fresh machine (CI) needs nothing but python3. It runs
 * as `python -m schemathesis.cli` because the venv is moved into place after building, which
 * leaves its scripts' shebangs pointing at the build directory.
 */
export async function ensureSchemathesis(): Promise<string[]> {
  const venv = join(REPO_ROOT, '.cache', `schemathesis-${SCHEMATHESIS_VERSION}`);
  const command = [join(venv, 'bin', 'python3'), '-m', 'schemathesis.cli'];
  if (existsSync(join(venv, '.installed'))) return command;
  // Built aside and renamed into place, so an interrupted install never looks finished.
  const building = `${venv}.build-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  await run('python3', ['-m', 'venv', building]);
  await run(join(building, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `schemathesis==${SCHEMATHESIS_VERSION}`], {
    timeout: 600_000,
  });
  writeFileSync(join(building, '.installed'), `${SCHEMATHESIS_VERSION}\n`);
  rmSync(venv, { recursive: true, force: true });
  renameSync(building, venv);
  return command;
}
