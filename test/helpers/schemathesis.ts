import { execFile } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './paths';

const run = promisify(execFile);

/** Pinned so every machine fuzzes with the same generator. */
export const SCHEMATHESIS_VERSION = '4.32.5';

/**
 * The `st` command of a private virtualenv under .cache/ (gitignored), installed from PyPI on
 * first use, so a fresh machine (CI) needs nothing but python3.
 */
export async function ensureSchemathesis(): Promise<string> {
  const venv = join(REPO_ROOT, '.cache', `schemathesis-${SCHEMATHESIS_VERSION}`);
  const st = join(venv, 'bin', 'st');
  const marker = join(venv, '.installed');
  if (existsSync(st) && existsSync(marker)) return st;
  rmSync(venv, { recursive: true, force: true });
  await run('python3', ['-m', 'venv', venv]);
  await run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `schemathesis==${SCHEMATHESIS_VERSION}`], {
    timeout: 600_000,
  });
  writeFileSync(marker, `${SCHEMATHESIS_VERSION}\n`);
  return st;
}
